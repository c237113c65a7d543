export { createRedactor, emptyCounts, TOKEN_KINDS, type RedactionContext, type RedactionCounts, type Redactor, type TokenKind } from "./redact";
export { instructionSignals, neutralizeText, normalizeForMatching, SUPPRESSED_MARKER, type NeutralizeOptions } from "./neutralize";
export { agentView, DEFAULT_JSON_KEYS, DEFAULT_VERBATIM_KEYS, reportIsClean, type AgentDetail, type AgentViewOptions, type AgentViewReport, type MemoEntry, type ProjectedString, type ProjectionMemo } from "./agent-view";
export { createExportRedaction, EXPORT_VERBATIM_KEYS, type ExportRedaction, type ExportRedactionOptions, type ExportRedactionReportEntry } from "./export";
