import { agentAccessStatus, agentToken, listAuditEvents, setAgentAccess, setAgentDetail, signInLink } from "./agent-access";
import { listArtifacts, showArtifact } from "./artifacts";
import { listCommits, showCommit, showHead } from "./commits";
import { collectGarbage, purgeGarbage, restoreGarbage } from "./gc";
import { listRuns, renameRun, listRunFacets, showRun } from "./runs";
import { analyzeHotspots, compareRuns, flameTimeline, flameTree, frameCallees, frameCallers, frameNeighbours, stackExamples, summarizeRun, traceWindow } from "./evidence";
import { importArtifact } from "./imports";
import { listCorpusFiles } from "./corpus";
import { runSql } from "./sql";
import { traceFlows } from "./trace-flows";
import { captureOptions, executeCapturePlan, listCapabilities, listWorkloads, planCapture, runCapture, showWorkload, startCapture } from "./captures";
import { cancelOperation, listOperations, showOperation } from "./operations";
import { addCell, addNoteCell, addQueryCell, changeCell, deleteCell, listCellRevisions, listCells, moveCell, restoreCell, showCell } from "./cells";
import { assessFinding, changeFinding, listFindings, recordFinding, showFinding } from "./findings";
import { listExperiments, planExperiment, resumeExperiment, runExperiment, showExperiment, summarizeExperiment } from "./experiments";
import { changeHypothesis, recordHypothesis } from "./hypotheses";
import { changeInvestigation, createInvestigation, investigationActivity, listInvestigations, showInvestigation } from "./investigations";
import { exportInvestigation, importInvestigation } from "./notebook-format";
import type { ServiceDef } from "./service";
import { validateWorkspace } from "./validate";
import { initializeWorkspace, workspaceStatus } from "./workspace";
import { compileRunWorkflow, getCriticalPath, getWorkflow, listToolContracts, listWorkflows, openWorkflow, reviewTool } from "./workflows";
import { addNotebookEntry } from "./notebook-entries";
import { approveWorkflowTool, benchmarkWorkflow, codegenWorkflow, getWorkflowRun, listWorkflowRuns, runWorkflow, workflowPolicy } from "./workflow-runs";
import { callExposedWorkflow, exposeWorkflow, listExposedWorkflows } from "./workflow-exposures";

export { agentAccessStatus, agentToken, listAuditEvents, recordSignIn, redeemStoredSignInCode, requirePerson, setAgentAccess, setAgentDetail, signInLink } from "./agent-access";
export { listArtifacts, showArtifact } from "./artifacts";
export { listCommits, showCommit, showHead } from "./commits";
export { collectGarbage, purgeGarbage, restoreGarbage } from "./gc";
export { listRuns, renameRun, listRunFacets, showRun } from "./runs";
export { analyzeHotspots, compareRuns, flameTimeline, flameTree, frameCallees, frameCallers, frameNeighbours, prepareRunView, runViewFacts, stackExamples, summarizeRun, traceWindow } from "./evidence";
export { importArtifact, importUploadedFile } from "./imports";
export { exportSpeedscope, readRunArtifact } from "./run-downloads";
export { listCorpusFiles, readCorpusObject } from "./corpus";
export { runSql } from "./sql";
export { traceFlows } from "./trace-flows";
export { captureOptions, executeCapturePlan, listCapabilities, listWorkloads, planCapture, runCapture, showWorkload, startCapture } from "./captures";
export { cancelOperation, listOperations, reconcileOperations, showOperation } from "./operations";
export { addCell, addNoteCell, addQueryCell, changeCell, deleteCell, listCellRevisions, listCells, moveCell, restoreCell, showCell } from "./cells";
export { assessFinding, changeFinding, listFindings, recordFinding, showFinding } from "./findings";
export { listExperiments, planExperiment, resumeExperiment, runExperiment, showExperiment, summarizeExperiment } from "./experiments";
export { changeHypothesis, recordHypothesis } from "./hypotheses";
export { changeInvestigation, createInvestigation, investigationActivity, listInvestigations, showInvestigation } from "./investigations";
export { exportInvestigation, importInvestigation, readNotebookDocument } from "./notebook-format";
export { callService, type ServiceContext, type ServiceDef } from "./service";
export { validateWorkspace } from "./validate";
export { initializeWorkspace, workspaceStatus } from "./workspace";
export { compileRunWorkflow, getCriticalPath, getWorkflow, listToolContracts, listWorkflows, openWorkflow, reviewTool } from "./workflows";
export { addNotebookEntry } from "./notebook-entries";
export { approveWorkflowTool, benchmarkWorkflow, codegenWorkflow, getWorkflowRun, listWorkflowRuns, runWorkflow, workflowPolicy } from "./workflow-runs";
export { callExposedWorkflow, exposeWorkflow, listExposedWorkflows } from "./workflow-exposures";

/** Every service operation, by name: the registry the transports and generated docs read. */
export const SERVICES: readonly ServiceDef[] = [
  initializeWorkspace,
  workspaceStatus,
  validateWorkspace,
  collectGarbage,
  restoreGarbage,
  purgeGarbage,
  listRuns,
  showRun,
  listRunFacets,
  renameRun,
  listArtifacts,
  showArtifact,
  listCommits,
  showCommit,
  showHead,
  importArtifact,
  summarizeRun,
  analyzeHotspots,
  frameCallers,
  frameCallees,
  frameNeighbours,
  stackExamples,
  flameTree,
  flameTimeline,
  traceWindow,
  traceFlows,
  compareRuns,
  listCorpusFiles,
  runSql,
  listWorkloads,
  showWorkload,
  listCapabilities,
  captureOptions,
  planCapture,
  executeCapturePlan,
  runCapture,
  startCapture,
  listOperations,
  showOperation,
  cancelOperation,
  agentAccessStatus,
  setAgentAccess,
  setAgentDetail,
  agentToken,
  signInLink,
  listAuditEvents,
  createInvestigation,
  listInvestigations,
  showInvestigation,
  changeInvestigation,
  investigationActivity,
  exportInvestigation,
  importInvestigation,
  addCell,
  addNoteCell,
  addNotebookEntry,
  addQueryCell,
  showCell,
  changeCell,
  moveCell,
  deleteCell,
  restoreCell,
  listCells,
  listCellRevisions,
  recordHypothesis,
  changeHypothesis,
  recordFinding,
  changeFinding,
  assessFinding,
  listFindings,
  showFinding,
  planExperiment,
  runExperiment,
  resumeExperiment,
  showExperiment,
  summarizeExperiment,
  listExperiments,
  compileRunWorkflow,
  getWorkflow,
  openWorkflow,
  listWorkflows,
  getCriticalPath,
  listToolContracts,
  reviewTool,
  runWorkflow,
  benchmarkWorkflow,
  getWorkflowRun,
  listWorkflowRuns,
  approveWorkflowTool,
  codegenWorkflow,
  workflowPolicy,
  exposeWorkflow,
  listExposedWorkflows,
  callExposedWorkflow,
] as unknown as ServiceDef[];
