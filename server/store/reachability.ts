import type { SqliteDatabase } from "./control-store";
import type { ObjectId } from "./object-store";

export interface ReferencedObject {
  id: ObjectId;
  size: number;
  /** What refers to it, e.g. "artifact" or "generation gen_… (samples)". */
  referrer: string;
}

/** Every object the control store refers to: native artifacts, generation files and workflow documents. */
export function referencedObjects(db: SqliteDatabase): ReferencedObject[] {
  const artifacts = db.prepare("SELECT id, size_bytes FROM artifacts ORDER BY id").all() as {
    id: ObjectId;
    size_bytes: number;
  }[];
  const files = db
    .prepare("SELECT generation_id, table_name, object_id, size_bytes FROM generation_files ORDER BY object_id")
    .all() as { generation_id: string; table_name: string; object_id: ObjectId; size_bytes: number }[];
  const workflows = db.prepare("SELECT id, object_id, size_bytes FROM workflows ORDER BY object_id").all() as { id: string; object_id: ObjectId; size_bytes: number }[];
  return [
    ...workflows.map((w) => ({ id: w.object_id, size: w.size_bytes, referrer: `workflow ${w.id}` })),
    ...artifacts.map((a) => ({ id: a.id, size: a.size_bytes, referrer: "artifact" })),
    ...files.map((f) => ({ id: f.object_id, size: f.size_bytes, referrer: `generation ${f.generation_id} (${f.table_name})` })),
  ];
}
