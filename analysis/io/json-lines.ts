import { EvidenceParseError } from "../formats/errors";
import { parseJsonDocument } from "./json-documents";
import { lineBatches } from "./text";

export interface JsonLine {
  value: unknown;
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line in the input. */
  offset: number;
}

/**
 * The values of a JSON Lines input, one line at a time (blank lines skipped), so memory stays
 * per line however long the file. A line that is no JSON fails with its line and byte offset.
 */
export async function* jsonLines(format: string, chunks: AsyncIterable<Uint8Array>, maxLineLength: number): AsyncGenerator<JsonLine> {
  for await (const batch of lineBatches(chunks, maxLineLength)) {
    while (batch.nextLine()) {
      const bytes = batch.bytes.subarray(batch.start, batch.end);
      let blank = true;
      for (let i = 0; i < bytes.length && blank; i++) blank = bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0d;
      if (blank) continue;
      let value: unknown;
      try {
        value = parseJsonDocument(format, bytes, batch.lineOffset);
      } catch (error) {
        if (error instanceof EvidenceParseError) throw new EvidenceParseError(format, error.reason, { offset: error.at.offset, line: batch.line });
        throw error;
      }
      yield { value, line: batch.line, offset: batch.lineOffset };
    }
  }
}
