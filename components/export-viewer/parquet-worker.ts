import type { ColumnSpec } from "../../analysis/evidence/schema";
import { parquetBufferToArrowIpc } from "../sql/parquet-to-arrow";
import { fromBase64 } from "./base64";

/**
 * The export's Parquet decoder, run in a Web Worker so the page stays responsive while millions
 * of rows are read: a part's base64 text in, its rows as an Arrow IPC stream out (the columns
 * asked for only). The viewer starts it from a Blob URL of this code, which the viewer's own
 * script carries (server/services/export-viewer.ts): nothing is fetched, so it works from file://.
 */

export interface DecodeRequest {
  id: number;
  base64: string;
  columns: ColumnSpec[];
}

export type DecodeAnswer = { id: number; ipc: Uint8Array; rows: number; base64_ms: number; parquet_ms: number } | { id: number; error: string };

const scope = self as unknown as { onmessage: ((event: MessageEvent<DecodeRequest>) => void) | null; postMessage(message: DecodeAnswer, transfer?: Transferable[]): void };

scope.onmessage = (event) => {
  const { id, base64, columns } = event.data;
  void (async () => {
    try {
      let t = performance.now();
      const bytes = fromBase64(base64);
      const base64Ms = performance.now() - t;
      t = performance.now();
      const out = await parquetBufferToArrowIpc(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, columns);
      scope.postMessage({ id, ipc: out.ipc, rows: out.rows, base64_ms: base64Ms, parquet_ms: performance.now() - t }, [out.ipc.buffer]);
    } catch (error) {
      scope.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
    }
  })();
};
