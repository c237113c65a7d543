import { BIGINT, BOOLEAN, DOUBLE, DuckDBDataChunk, INTEGER, VARCHAR, type DuckDBConnection, type DuckDBInstance, type DuckDBType, type DuckDBValue } from "@duckdb/node-api";
import { randomBytes } from "node:crypto";
import { createReadStream, promises as fsp } from "node:fs";
import path from "node:path";
import type { BatchSink, RowBatch } from "../../analysis/evidence/builder";
import { TABLES, TABLE_NAMES, type ColumnType, type TableName } from "../../analysis/evidence/schema";
import type { GenerationFile } from "../domain/models";
import type { Workspace } from "../store/workspace";
import { openDuckDb, sqlString } from "./duckdb";

const DUCK_TYPES: Record<ColumnType, DuckDBType> = { INTEGER, BIGINT, DOUBLE, VARCHAR, BOOLEAN };
const VECTOR_SIZE = 2048;

function toDuck(type: ColumnType, value: unknown): DuckDBValue {
  if (value === null || value === undefined) return null;
  if (type === "BIGINT") return BigInt(value as number);
  return value as DuckDBValue;
}

/**
 * Receives the evidence batches of one generation, stages them in an in-memory DuckDB (spilling
 * to the workspace's tmp/ when large), and on finish writes one Parquet file per table into the
 * object store. Every file carries `generation_id` so readers can union generations by name.
 */
export class ParquetGenerationWriter implements BatchSink {
  private constructor(
    private readonly ws: Workspace,
    private readonly generationId: string,
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    private readonly stagingDir: string,
  ) {}

  static async open(ws: Workspace, generationId: string): Promise<ParquetGenerationWriter> {
    const stagingDir = path.join(ws.layout.tmp, `extract-${process.pid}-${randomBytes(6).toString("hex")}`);
    await fsp.mkdir(stagingDir, { recursive: true });
    const { instance, connection } = await openDuckDb({ tempDirectory: stagingDir, memoryLimit: "1GB" });
    for (const table of TABLE_NAMES) {
      const columns = TABLES[table].map((c) => `"${c.name}" ${c.type}${c.nullable ? "" : " NOT NULL"}`).join(", ");
      await connection.run(`CREATE TABLE "${table}" (${columns})`);
    }
    return new ParquetGenerationWriter(ws, generationId, instance, connection, stagingDir);
  }

  async write(batch: RowBatch): Promise<void> {
    const specs = TABLES[batch.table];
    const types = specs.map((c) => DUCK_TYPES[c.type]);
    const appender = await this.connection.createAppender(batch.table);
    try {
      for (let start = 0; start < batch.length; start += VECTOR_SIZE) {
        const end = Math.min(batch.length, start + VECTOR_SIZE);
        const chunk = DuckDBDataChunk.create(types, end - start);
        chunk.setColumns(
          specs.map((c) => {
            const source = batch.columns[c.name];
            const out: DuckDBValue[] = new Array(end - start);
            for (let i = start; i < end; i++) out[i - start] = toDuck(c.type, source[i]);
            return out;
          }),
        );
        appender.appendDataChunk(chunk);
      }
    } finally {
      appender.closeSync();
    }
  }

  /** Writes every table as Parquet into the object store; returns the files for the generation row. */
  async finish(): Promise<GenerationFile[]> {
    const files: GenerationFile[] = [];
    try {
      for (const table of TABLE_NAMES) {
        const target = path.join(this.stagingDir, `${table}.parquet`);
        const rows = await this.connection.runAndReadAll(`SELECT count(*)::BIGINT FROM "${table}"`);
        const rowCount = Number(rows.getRows()[0][0]);
        await this.connection.run(
          `COPY (SELECT ${sqlString(this.generationId)} AS generation_id, * FROM "${table}") TO ${sqlString(target)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`,
        );
        await this.connection.run(`DROP TABLE "${table}"`);
        const stored = await this.ws.objects.put(createReadStream(target));
        await fsp.rm(target, { force: true });
        files.push({ table, object_id: stored.id, size_bytes: stored.size, row_count: rowCount });
      }
      return files;
    } finally {
      await this.close();
    }
  }

  async close(): Promise<void> {
    try {
      this.connection.closeSync();
      this.instance.closeSync();
    } catch {
      // already closed
    }
    await fsp.rm(this.stagingDir, { recursive: true, force: true });
  }
}

export type { TableName };
