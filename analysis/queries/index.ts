import { calleesQuery, callersQuery, stackExamplesQuery } from "./callers";
import { compareQuery } from "./compare";
import { exportSamplesQuery, exportTracksQuery } from "./export";
import { criticalPathEdgesQuery, criticalPathSpansQuery } from "./critical-path";
import type { EvidenceQuery } from "./define";
import { timelineFramesQuery, timelineMetricIdsQuery, timelineSamplesQuery, timelineStacksQuery } from "./flame-timeline";
import { flameTreeQuery, flameTreeRangeQuery } from "./flame-tree";
import { hotspotsQuery } from "./hotspots";
import { measurementTotalsQuery, metricTotalsQuery, spanTotalsQuery } from "./summary";
import { traceFlowsQuery } from "./trace-flows";
import { spanExtentQuery, spanIndexQuery, traceWindowQuery, trackSpansQuery, tracksQuery } from "./trace-window";
import { trackTotalsQuery } from "./tracks";

export { timelineCells, timelineFramesQuery, timelineMetricIdsQuery, timelineRemainder, timelineSamplesQuery, timelineStacksQuery, type TimelineCell } from "./flame-timeline";
export { addPrunedRemainders, flameTreeQuery, flameTreeRangeQuery, type FlameNode } from "./flame-tree";
export { calleesQuery, callersQuery, stackExamplesQuery } from "./callers";
export { compareQuery, compareOnTracksQuery } from "./compare";
export { exportSamplesQuery, exportTracksQuery } from "./export";
export { criticalPathEdgesQuery, criticalPathSpansQuery } from "./critical-path";
export { renderSql, type EvidenceQuery } from "./define";
export { hotspotsQuery, type HotspotRow } from "./hotspots";
export { measurementTotalsQuery, metricTotalsQuery, spanTotalsQuery } from "./summary";
export { traceFlowsQuery } from "./trace-flows";
export { spanExtentQuery, spanIndexQuery, traceWindowQuery, trackSpansQuery, tracksQuery } from "./trace-window";
export { scopeToTracks, trackLabel, trackTotalsQuery } from "./tracks";

/** Every named evidence query: the server and the browser run these same definitions. */
export const EVIDENCE_QUERIES: readonly EvidenceQuery<any, any>[] = [
  hotspotsQuery,
  flameTreeQuery,
  flameTreeRangeQuery,
  timelineFramesQuery,
  timelineStacksQuery,
  timelineMetricIdsQuery,
  timelineSamplesQuery,
  callersQuery,
  calleesQuery,
  stackExamplesQuery,
  traceWindowQuery,
  spanExtentQuery,
  spanIndexQuery,
  traceFlowsQuery,
  tracksQuery,
  trackSpansQuery,
  trackTotalsQuery,
  compareQuery,
  metricTotalsQuery,
  spanTotalsQuery,
  measurementTotalsQuery,
  criticalPathSpansQuery,
  criticalPathEdgesQuery,
  exportSamplesQuery,
  exportTracksQuery,
];
