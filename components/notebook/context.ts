"use client";

import { createContext, useContext } from "react";
import type { CellBody, CellContent, CellKindName } from "../../analysis/notebook/cells";
import type { ErrorDocument } from "../../server/domain/errors";
import type { Cell, Finding, Hypothesis } from "../../server/domain/notebook";
import type { SqlRunState } from "./sql-runtime";

/** A cell as the page holds it: the server's version and the edits not yet saved. */
export interface PageCell {
  server: Cell;
  /** Edits made here and not yet confirmed by the server (autosaved). */
  draft: { content?: CellBody["content"]; name?: string | null } | null;
  saving: boolean;
  /** Someone else saved first: their version, until the person takes one. */
  conflict: Cell | null;
  error: ErrorDocument | null;
}

/** What every cell renderer may read and do besides its own content. */
export interface NotebookEnv {
  investigationId: string;
  headCommitId: string | null;
  hypotheses: ReadonlyMap<string, Hypothesis>;
  findings: ReadonlyMap<string, Finding>;
  cells: readonly PageCell[];
  sql: { states: ReadonlyMap<string, SqlRunState>; run: (cellId: string) => Promise<void> };
  /** A record changed on the server (hypotheses.update, findings.assess): put it in the page. */
  recordChanged: (record: { hypothesis?: Hypothesis; finding?: Finding }) => void;
  cellLabel: (cellId: string) => string;
}

export const NotebookContext = createContext<NotebookEnv | null>(null);

export function useNotebook(): NotebookEnv {
  const env = useContext(NotebookContext);
  if (!env) throw new Error("A notebook cell renders inside a notebook.");
  return env;
}

/** A cell's content as shown: the unsaved edit when there is one. */
export function contentOf<K extends CellKindName>(cell: PageCell): CellContent<K> {
  const content: unknown = cell.draft?.content ?? cell.server.content;
  return content as CellContent<K>;
}

/** Props of a kind's renderer (components/notebook/cells/<kind>.tsx). */
export interface CellViewProps<K extends CellKindName = CellKindName> {
  cell: PageCell;
  content: Extract<CellBody, { kind: K }>["content"];
  /** Whether the cell is in edit mode (Enter); Esc leaves it. */
  editing: boolean;
  /** A new content: shown at once, saved a moment later by compare-and-set. */
  onContent: (content: Extract<CellBody, { kind: K }>["content"]) => void;
  onName: (name: string | null) => void;
}
