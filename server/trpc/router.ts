import { agentRouter } from "./agent";
import { artifactsRouter } from "./artifacts";
import { capturesRouter, operationsRouter, workloadsRouter } from "./captures";
import { commitsRouter } from "./commits";
import { corpusRouter } from "./corpus";
import { evidenceRouter } from "./evidence";
import { experimentsRouter } from "./experiments";
import { exportsRouter } from "./exports";
import { importsRouter } from "./imports";
import { router } from "./init";
import { cellsRouter } from "./cells";
import { findingsRouter } from "./findings";
import { hypothesesRouter } from "./hypotheses";
import { investigationsRouter } from "./investigations";
import { runsRouter } from "./runs";
import { sqlRouter } from "./sql";
import { criticalPathRouter, toolsRouter, workflowsRouter } from "./workflows";
import { workspaceRouter } from "./workspace";

/** One router per service; procedure paths are the service names (workspace.status, runs.list, …). */
export const appRouter = router({
  workspace: workspaceRouter,
  runs: runsRouter,
  artifacts: artifactsRouter,
  commits: commitsRouter,
  corpus: corpusRouter,
  sql: sqlRouter,
  imports: importsRouter,
  evidence: evidenceRouter,
  workloads: workloadsRouter,
  captures: capturesRouter,
  operations: operationsRouter,
  agent: agentRouter,
  investigations: investigationsRouter,
  cells: cellsRouter,
  hypotheses: hypothesesRouter,
  findings: findingsRouter,
  experiments: experimentsRouter,
  workflows: workflowsRouter,
  tools: toolsRouter,
  critical_path: criticalPathRouter,
  exports: exportsRouter,
});

export type AppRouter = typeof appRouter;
