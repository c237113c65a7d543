import { callgrindImporter } from "./callgrind";
import { chromeTraceImporter } from "./chrome-trace";
import { cpuprofileImporter } from "./cpuprofile";
import { foldedImporter } from "./folded";
import { firefoxProcessedImporter } from "./firefox-processed";
import { geckoImporter } from "./gecko";
import { heapprofileImporter } from "./heapprofile";
import { jfrImporter } from "./jfr";
import { instrumentsImporter } from "./instruments";
import { otlpJsonImporter } from "./otlp-json";
import { perfScriptImporter } from "./perf-script";
import { pprofImporter } from "./pprof";
import { safariTimelineImporter } from "./safari";
import { speedscopeImporter } from "./speedscope";
import { v8LogImporter } from "./v8-log";
import { stackprofImporter } from "./stackprof";
import { traceV1Importer } from "./trace-v1";
import { claudeCodeImporter } from "./claude-code";
import { jaegerJsonImporter } from "./jaeger-json";
import { codexRolloutImporter } from "./codex-rollout";
import { hfSessionImporter } from "./hf-session";
import { openaiChatImporter } from "./openai-chat";
import type { FormatId, FormatImporter } from "./types";

/** Every importer, by format id: the one registry the import service, CLI and docs read. */
export const IMPORTERS: readonly FormatImporter[] = [
  cpuprofileImporter,
  heapprofileImporter,
  chromeTraceImporter,
  speedscopeImporter,
  foldedImporter,
  pprofImporter,
  perfScriptImporter,
  callgrindImporter,
  otlpJsonImporter,
  // Issue 19, second half of item 11: V8 --prof logs and Java Flight Recorder.
  v8LogImporter,
  jfrImporter,
  // Firefox Profiler, stackprof, Instruments and Safari formats (issue 19, item 11).
  geckoImporter,
  firefoxProcessedImporter,
  stackprofImporter,
  instrumentsImporter,
  safariTimelineImporter,
  // Agent tool-call traces and service traces (issue 22, items 1-2).
  traceV1Importer,
  claudeCodeImporter,
  codexRolloutImporter,
  hfSessionImporter,
  openaiChatImporter,
  jaegerJsonImporter,
];

export function importerFor(id: FormatId): FormatImporter {
  const found = IMPORTERS.find((i) => i.id === id);
  if (!found) throw new Error(`no importer ${id}`);
  return found;
}

/** The most likely format of an input from its first bytes and name; null when none fits. */
export function detectFormat(head: Uint8Array, headText: string, fileName: string | null): FormatImporter | null {
  let best: FormatImporter | null = null;
  let bestScore = 0;
  for (const importer of IMPORTERS) {
    const score = importer.sniff(head, headText, fileName);
    if (score > bestScore) {
      best = importer;
      bestScore = score;
    }
  }
  return bestScore >= 0.3 ? best : null;
}

export type { FormatId, FormatImporter } from "./types";
