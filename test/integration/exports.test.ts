import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os, { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmberscopeError } from "../../server/domain/errors";
import { openDuckDb, sqlString } from "../../server/evidence/duckdb";
import { addCell, callService, createInvestigation, exportInvestigation, flameTree, importArtifact, recordFinding, type ServiceContext } from "../../server/services";
import { readBundle, renderBundle } from "../../server/services/export-bundle";
import { builtExportForDownload, createExport, importBundle, startExport, verifyExport } from "../../server/services/exports";
import { cancelOperation, showOperation } from "../../server/services/operations";
import { initWorkspace } from "../../server/store/workspace";
import { runCli } from "../helpers/cli";

/**
 * Issue 24's leak test: each kind of secret is planted in a profile's function names and file
 * paths, a trace's span names and args, OTLP attributes, an agent session's tool arguments and
 * results, and the notebook's notes; the export is scanned byte by byte — every part decoded,
 * gzip inflated, every Parquet row (so every dictionary entry used) read by hyparquet and by
 * DuckDB, and every column's statistics — and must hold none of them. The same scan of a full
 * export (every kind allowed by a person) finds them all, so the scan can fail.
 */

const HOST = os.hostname();
const SECRETS = {
  home: "/home/dana/secret-project/src/leaky.c",
  host: "ip-10-20-30-45.ec2.internal",
  email: "dana.kowalski@example.org",
  akia: "AKIAZ7QX3LEAKTEST123",
  bearer: "Bearer f00dBabe9c8d7e6f5a4b3c2d1e0f",
  jwt: "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkYW5hIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  key: "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----",
  password: "postgres://app:Hunter2Secret@db.example.net:5432/shop",
  fileUrl: "file:///home/dana/notes/plan.txt",
  ip: "10.20.30.40",
  otherHost: "https://grafana.acme-corp.io/d/slow and build-7.corp.acme.net and deploy@buildbox-3",
};
/** What must not survive: the distinctive part of each planted value. */
const NEEDLES: Record<string, string> = {
  home: "/home/dana",
  host: "ip-10-20-30-45",
  email: "dana.kowalski@example.org",
  akia: "AKIAZ7QX3LEAKTEST123",
  bearer: "f00dBabe9c8d7e6f5a4b3c2d1e0f",
  jwt: "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  key: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
  password: "Hunter2Secret",
  fileUrl: "file:///home/dana",
  ip: "10.20.30.40",
  urlHost: "grafana.acme-corp.io",
  fqdn: "build-7.corp.acme.net",
  userAtHost: "buildbox-3",
};
if (HOST.length >= 3 && !["localhost", "debian", "ubuntu"].includes(HOST.toLowerCase())) NEEDLES.localHost = HOST;

const plant = (label: string) => `${label} ${Object.values(SECRETS).join(" | ")} on ${HOST}`;

function cpuprofile(): string {
  const node = (id: number, functionName: string, url: string, children: number[]) => ({ id, callFrame: { functionName, scriptId: String(id), url, lineNumber: 3, columnNumber: 1 }, hitCount: 0, children });
  return JSON.stringify({
    nodes: [
      node(1, "(root)", "", [2]),
      node(2, "main", "file:///srv/app/main.js", [3, 4]),
      node(3, `handle ${SECRETS.email} ${SECRETS.akia}`, SECRETS.home, []),
      node(4, `auth ${SECRETS.jwt}`, `${SECRETS.fileUrl}`, [5]),
      node(5, `connect ${SECRETS.password} ${SECRETS.ip} ${SECRETS.host} ${HOST}`, `/home/dana/.ssh/id_rsa ${SECRETS.bearer}`, []),
    ],
    startTime: 0,
    endTime: 4000,
    samples: [3, 3, 5, 3, 5, 3],
    timeDeltas: [0, 500, 500, 500, 500, 500],
  });
}

function chromeTrace(): string {
  return JSON.stringify({
    traceEvents: [
      { name: "process_name", ph: "M", pid: 1, args: { name: "svc" } },
      { name: `load ${SECRETS.home}`, ph: "X", pid: 1, tid: 1, ts: 0, dur: 100, args: { url: `https://api.example.com/v1?token=abc&user=${SECRETS.email}`, note: plant("args"), env: { AWS_KEY: SECRETS.akia } } },
      { name: `query ${SECRETS.password}`, ph: "X", pid: 1, tid: 1, ts: 10, dur: 50, args: { auth: SECRETS.bearer, key: SECRETS.key } },
    ],
  });
}

function otlp(): string {
  const str = (v: string) => ({ stringValue: v });
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: "service.name", value: str("checkout") }, { key: "host.name", value: str(SECRETS.host) }, { key: "user.email", value: str(SECRETS.email) }] },
        scopeSpans: [
          {
            scope: { name: "http" },
            spans: [
              {
                traceId: "t1",
                spanId: "a",
                name: `GET ${SECRETS.fileUrl}`,
                kind: 2,
                startTimeUnixNano: "1000",
                endTimeUnixNano: "9000",
                attributes: [
                  { key: "db.statement", value: str(plant("attr")) },
                  { key: "http.request.header.authorization", value: str(SECRETS.bearer) },
                  { key: "net.peer.ip", value: str(SECRETS.ip) },
                ],
              },
            ],
          },
        ],
      },
    ],
  });
}

function claudeSession(): string {
  const base = { isSidechain: false, userType: "external", cwd: "/home/dana/secret-project", sessionId: "7d1c3b9e-2f4a-4e1b-9c55-0a8b2d6e4f10", version: "1.0.51", gitBranch: "main" };
  return [
    { ...base, parentUuid: null, type: "user", message: { role: "user", content: "Deploy it" }, uuid: "00000001-0000-4000-8000-000000000001", timestamp: "2025-07-14T09:30:00.000Z" },
    {
      ...base,
      parentUuid: "00000001-0000-4000-8000-000000000001",
      type: "assistant",
      message: { id: "msg_01A", type: "message", role: "assistant", model: "claude-sonnet-4-20250514", content: [{ type: "tool_use", id: "toolu_01", name: "Bash", input: { command: `curl -H 'Authorization: ${SECRETS.bearer}' ${SECRETS.password} && cat ${SECRETS.home}`, description: plant("tool args") } }], stop_reason: "tool_use", usage: { input_tokens: 4, output_tokens: 9 } },
      uuid: "00000002-0000-4000-8000-000000000002",
      timestamp: "2025-07-14T09:30:02.000Z",
    },
    {
      ...base,
      parentUuid: "00000002-0000-4000-8000-000000000002",
      type: "user",
      message: { role: "user", content: [{ tool_use_id: "toolu_01", type: "tool_result", content: plant("tool result") }] },
      uuid: "00000003-0000-4000-8000-000000000003",
      timestamp: "2025-07-14T09:30:03.000Z",
    },
  ]
    .map((l) => JSON.stringify(l))
    .join("\n");
}

/** Every text an export holds, read by independent readers: the HTML, each decoded and inflated part, each Parquet part's rows and statistics (hyparquet and DuckDB). */
async function everyText(file: string): Promise<string[]> {
  const html = readFileSync(file, "utf8");
  const texts = [html];
  const scratch = mkdtempSync(path.join(tmpdir(), "export-scan-"));
  const { instance, connection } = await openDuckDb();
  try {
    for (const m of html.matchAll(/<script type="application\/octet-stream" data-part="([^"]*)">([A-Za-z0-9+/=]*)<\/script>/g)) {
      const [, name, base64] = m;
      let bytes = Buffer.from(base64, "base64");
      if (name.endsWith(".gz")) bytes = gunzipSync(bytes);
      texts.push(bytes.toString("latin1"), bytes.toString("utf8"));
      if (!name.endsWith(".parquet")) continue;
      const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      const meta = parquetMetadata(ab);
      texts.push(JSON.stringify(meta, (_k, v) => (typeof v === "bigint" ? String(v) : v instanceof Uint8Array ? Buffer.from(v).toString("latin1") : v)));
      texts.push(JSON.stringify(await parquetReadObjects({ file: ab, compressors }), (_k, v) => (typeof v === "bigint" ? String(v) : v)));
      const local = path.join(scratch, `${texts.length}.parquet`);
      writeFileSync(local, bytes);
      const rows = (await connection.runAndReadAll(`SELECT * FROM read_parquet(${sqlString(local)})`)).getRowObjectsJson();
      const stats = (await connection.runAndReadAll(`SELECT stats_min, stats_max, stats_min_value, stats_max_value FROM parquet_metadata(${sqlString(local)})`)).getRowObjectsJson();
      texts.push(JSON.stringify(rows), JSON.stringify(stats));
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
    rmSync(scratch, { recursive: true, force: true });
  }
  return texts;
}

const hitsIn = (texts: string[]) => Object.entries(NEEDLES).filter(([, needle]) => texts.some((t) => t.includes(needle) || t.includes(JSON.stringify(needle).slice(1, -1)))).map(([kind]) => kind);

async function refusal(promise: Promise<unknown>): Promise<EmberscopeError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof EmberscopeError) return error;
    throw error;
  }
  throw new Error("expected a typed error, got a result");
}

describe("shareable redacted exports", () => {
  let root: string;
  let ctx: ServiceContext;
  let investigationId: string;
  let profileRun: string;
  let flameCommit: string;
  let redactedFile: string;
  let fullFile: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-export-"));
    initWorkspace(root).close();
    ctx = { locator: { cwd: root, projectRoot: root }, actor: "cli" };
    const files: [string, string][] = [
      ["app.cpuprofile", cpuprofile()],
      ["trace.json", chromeTrace()],
      ["otlp.json", otlp()],
      ["session.jsonl", claudeSession()],
    ];
    const runs: string[] = [];
    for (const [name, text] of files) {
      writeFileSync(path.join(root, name), text);
      const r = await callService(importArtifact, ctx, { path: path.join(root, name), ...(name === "otlp.json" ? { format: "otlp-json" } : name === "session.jsonl" ? { format: "claude-code" } : {}) });
      runs.push(r.run_id);
    }
    profileRun = runs[0];
    const inv = await callService(createInvestigation, ctx, { title: "Why is checkout slow", question: `Seen by ${SECRETS.email}` });
    investigationId = inv.investigation_id;
    const note = await callService(addCell, ctx, { investigation_id: investigationId, kind: "note", content: { markdown: plant("A note:") } });
    const flame = await callService(addCell, ctx, { investigation_id: investigationId, kind: "flame", content: { run_id: profileRun } });
    flameCommit = flame.commit_id!;
    for (const run of runs.slice(1)) await callService(addCell, ctx, { investigation_id: investigationId, kind: "trace", content: { run_id: run } });
    await callService(addCell, ctx, { investigation_id: investigationId, kind: "sql", name: "by_name", content: { sql: "SELECT name, count(*) AS n FROM frames GROUP BY name ORDER BY name" } });
    await callService(recordFinding, ctx, {
      investigation_id: investigationId,
      title: "auth dominates",
      claim: `auth is hot; see ${SECRETS.home}`,
      evidence_level: "observed",
      references: [{ relation: "supports", target: { kind: "cell", cell_id: flame.cell_id, commit_id: flameCommit } }],
    });
    expect(note.cell_id).toMatch(/^cell_/);
    redactedFile = path.join(root, "redacted.html");
    fullFile = path.join(root, "full.html");
  }, 120_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("previews every redaction by kind, count and first place, and writes nothing", async () => {
    const preview = await callService(createExport, ctx, { subject: { kind: "investigation", investigation_id: investigationId }, preview: true });
    expect(preview.preview).toBe(true);
    expect(preview.size_bytes).toBe(0);
    const byKind = new Map(preview.report.map((r) => [r.kind, r]));
    for (const kind of ["PATH", "HOST", "EMAIL", "IP", "SECRET"]) {
      expect(byKind.get(kind)!.count, kind).toBeGreaterThan(0);
      expect(byKind.get(kind)!.action).toBe("redact");
      expect(byKind.get(kind)!.example, kind).toMatch(/^(notebook |frames\.|spans\.|tracks\.)/);
    }
  }, 120_000);

  it("a redacted export holds none of the planted secrets in any byte, row, dictionary or statistic", async () => {
    const r = await callService(createExport, ctx, { subject: { kind: "investigation", investigation_id: investigationId }, out: redactedFile });
    expect(r.redaction_mode).toBe("redacted");
    expect(r.evidence.files).toBeGreaterThan(4);
    expect(hitsIn(await everyText(redactedFile))).toEqual([]);
  }, 180_000);

  it("the same scan of a full export, every kind allowed by a person, finds every planted secret", async () => {
    const all = ["PATH", "USER", "HOST", "EMAIL", "IP", "SECRET", "QUERY", "ENV", "DATA"];
    const r = await callService(createExport, ctx, { subject: { kind: "investigation", investigation_id: investigationId }, choices: { allow: all }, out: fullFile });
    expect(r.redaction_mode).toBe("full");
    expect(hitsIn(await everyText(fullFile)).sort()).toEqual(Object.keys(NEEDLES).sort());
    // The flame cell's summary (painted before the engine is ready) is text the scan reads too: here it holds the planted path.
    const summaries = JSON.parse(new TextDecoder().decode(readBundle(readFileSync(fullFile, "utf8")).parts.get("summaries.json")!)) as Record<string, { nodes: { file: string | null }[] }>;
    expect(Object.values(summaries)[0].nodes.some((n) => n.file?.includes(SECRETS.home))).toBe(true);
  }, 180_000);

  it("exports.start builds the file as an operation: phases and progress over the evidence files, succeeded, downloadable once, verifiable", async () => {
    const { operation_id } = await callService(startExport, ctx, { investigation_id: investigationId });
    const seen = new Set<string>();
    let op = await callService(showOperation, ctx, { operation_id });
    expect(op.kind).toBe("export");
    for (const deadline = Date.now() + 150_000; (op.state === "running" || op.state === "queued") && Date.now() < deadline; ) {
      if (op.phase) seen.add(op.phase);
      await new Promise((r) => setTimeout(r, 50));
      op = await callService(showOperation, ctx, { operation_id });
    }
    expect(op.state, JSON.stringify(op.error)).toBe("succeeded");
    expect(seen.has("redacting the evidence") || seen.has("summarizing the flame graphs") || seen.has("packing the file")).toBe(true);
    expect(op.progress.total).toBeGreaterThan(4);
    expect(op.progress.completed).toBe(op.progress.total);
    const file = await callService(builtExportForDownload, ctx, { operation_id });
    expect(file.file_name).toBe("why-is-checkout-slow.emberscope.html");
    const out = path.join(root, "from-operation.html");
    writeFileSync(out, file.html);
    expect((await callService(verifyExport, ctx, { file: out })).redaction.mode).toBe("redacted");
    expect(hitsIn(await everyText(out))).toEqual([]);
  }, 180_000);

  it("an export operation cancelled at once ends cancelled with no file; a bad start is refused before any operation exists", async () => {
    const { operation_id } = await callService(startExport, ctx, { investigation_id: investigationId });
    await callService(cancelOperation, ctx, { operation_id });
    let op = await callService(showOperation, ctx, { operation_id });
    for (const deadline = Date.now() + 60_000; op.state !== "cancelled" && op.state !== "failed" && op.state !== "succeeded" && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
      op = await callService(showOperation, ctx, { operation_id });
    }
    expect(op.state).toBe("cancelled");
    expect((op.error as { code: string }).code).toBe("CANCELLED");
    expect((await refusal(callService(builtExportForDownload, ctx, { operation_id }))).code).toBe("INVALID_ARGUMENTS");

    const agent: ServiceContext = { ...ctx, actor: "agent" };
    expect((await refusal(callService(startExport, agent, { investigation_id: investigationId, choices: { allow: ["EMAIL"] } }))).code).toBe("PERSON_SESSION_REQUIRED");
    expect((await refusal(callService(startExport, ctx, { investigation_id: "inv_nope" }))).code).toBe("INVESTIGATION_NOT_FOUND");
    expect((await refusal(callService(builtExportForDownload, ctx, { operation_id: "../../etc/passwd" }))).code).toBe("INVALID_ARGUMENTS");
  }, 120_000);

  it("an agent may not widen an export: any allowed kind is refused", async () => {
    const agent: ServiceContext = { ...ctx, actor: "agent" };
    const e = await refusal(callService(createExport, agent, { subject: { kind: "investigation", investigation_id: investigationId }, choices: { allow: ["EMAIL"] }, preview: true }));
    expect(e.code).toBe("PERSON_SESSION_REQUIRED");
  });

  it("verify passes an untouched export, records the choice, and names the part where one byte was changed", async () => {
    const ok = await callService(verifyExport, ctx, { file: redactedFile });
    expect(ok.redaction.mode).toBe("redacted");
    expect(ok.scan.strings).toBeGreaterThan(50);
    const full = await callService(verifyExport, ctx, { file: fullFile });
    expect(full.redaction.mode).toBe("full");

    // A full export relabelled (manifest rewritten with its hash) as redacted: the re-scan finds what it holds.
    const fullBundle = readBundle(readFileSync(fullFile, "utf8"));
    const relabelled = { ...fullBundle.manifest, redaction: { ...fullBundle.manifest.redaction, mode: "redacted" as const, choices: Object.fromEntries(Object.keys(fullBundle.manifest.redaction.choices).map((k) => [k, "redact" as const])) } };
    const liar = path.join(root, "relabelled.html");
    writeFileSync(liar, renderBundle(relabelled, fullBundle.parts));
    const leak = await refusal(callService(verifyExport, ctx, { file: liar }));
    expect(leak.code).toBe("BUNDLE_LEAKS");
    const leakedKinds = (leak.details.findings as { kind: string }[]).map((f) => f.kind);
    for (const kind of ["PATH", "EMAIL", "IP", "SECRET"]) expect(leakedKinds).toContain(kind);
    expect(JSON.stringify(leak.details)).not.toContain(NEEDLES.email);

    const html = readFileSync(redactedFile, "utf8");
    const part = /<script type="application\/octet-stream" data-part="(evidence\/[^"]*frames\.parquet)">/.exec(html)!;
    const at = part.index + part[0].length + 40;
    const tampered = path.join(root, "tampered.html");
    writeFileSync(tampered, html.slice(0, at) + (html[at] === "A" ? "B" : "A") + html.slice(at + 1));
    const e = await refusal(callService(verifyExport, ctx, { file: tampered }));
    expect(e.code).toBe("BUNDLE_INVALID");
    expect(e.details.part).toBe(part[1]);

    const manifestAt = html.indexOf('"title":"') + 10;
    writeFileSync(tampered, html.slice(0, manifestAt) + (html[manifestAt] === "x" ? "y" : "x") + html.slice(manifestAt + 1));
    expect((await refusal(callService(verifyExport, ctx, { file: tampered }))).details.part).toBe("manifest");

    // An export of version 1 (its bootstrap after every part) still reads and verifies.
    const v1 = readBundle(html);
    const old = path.join(root, "version1.html");
    writeFileSync(old, renderBundle({ ...v1.manifest, version: 1 }, v1.parts));
    expect(readFileSync(old, "utf8").indexOf("createObjectURL")).toBeGreaterThan(html.indexOf("createObjectURL"));
    expect((await callService(verifyExport, ctx, { file: old })).ok).toBe(true);

    const boot = html.lastIndexOf("createObjectURL");
    writeFileSync(tampered, html.slice(0, boot) + "createObjectURl" + html.slice(boot + 15));
    expect((await refusal(callService(verifyExport, ctx, { file: tampered }))).details.part).toBe("envelope");
  }, 120_000);

  it("the CLI exports a run's view with --preview and --allow, verifies it (exit 0) and refuses a tampered file with the input family's exit code naming the part", async () => {
    const preview = await runCli(["export", "run", profileRun, "--view", "flame", "--preview", "--json"], { cwd: root });
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.json.preview).toBe(true);
    expect(preview.json.report.find((r: { kind: string }) => r.kind === "EMAIL").count).toBeGreaterThan(0);
    const human = await runCli(["export", "run", profileRun, "--preview"], { cwd: root });
    expect(human.stdout).toMatch(/EMAIL\s+\d+\s+redact\s+frames\.name row \d+/);

    const out = path.join(root, "run.html");
    const made = await runCli(["export", "run", profileRun, "--allow", "IP", "--out", "run.html", "--json"], { cwd: root });
    expect(made.code, made.stderr).toBe(0);
    expect(made.json.redaction_mode).toBe("person-widened");
    const verified = await runCli(["export", "verify", out, "--json"], { cwd: root });
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json.redaction.choices.IP).toBe("allow");
    expect(verified.json.scan.found.IP).toBeGreaterThan(0);
    expect(verified.json.scan.found.EMAIL).toBe(0);

    const html = readFileSync(out, "utf8");
    const at = html.indexOf('data-part="notebook.json">') + 40;
    writeFileSync(out, html.slice(0, at) + (html[at] === "A" ? "B" : "A") + html.slice(at + 1));
    const refused = await runCli(["export", "verify", out, "--json"], { cwd: root });
    expect(refused.code).toBe(5);
    expect(refused.json.code).toBe("BUNDLE_INVALID");
    expect(refused.json.details.part).toBe("notebook.json");
  }, 180_000);

  it("import-bundle brings the export into another workspace: the notebook round-trips with its ids, marked imported, over the export's evidence", async () => {
    const other = mkdtempSync(path.join(tmpdir(), "emberscope-import-"));
    try {
      initWorkspace(other).close();
      const otherCtx: ServiceContext = { locator: { cwd: other, projectRoot: other }, actor: "cli" };
      const imported = await callService(importBundle, otherCtx, { file: redactedFile });
      expect(imported.investigation_id).toBe(investigationId);
      const original = await callService(exportInvestigation, ctx, { investigation_id: investigationId });
      const copy = await callService(exportInvestigation, otherCtx, { investigation_id: investigationId });
      expect(copy.cells.map((c) => [c.cell_id, c.kind, c.position, c.commit_id, c.name])).toEqual(original.cells.map((c) => [c.cell_id, c.kind, c.position, c.commit_id, c.name]));
      expect(copy.findings.map((f) => f.finding_id)).toEqual(original.findings.map((f) => f.finding_id));
      // The notes come back redacted: the copy is what was shared.
      expect(JSON.stringify(copy)).not.toContain(NEEDLES.email);
      // The flame cell's evidence reads the same in the new workspace, at the same commit.
      const there = await callService(flameTree, otherCtx, { run_id: profileRun, commit_id: flameCommit });
      const here = await callService(flameTree, ctx, { run_id: profileRun, commit_id: flameCommit });
      expect(there.nodes.map((n) => [n.depth, n.self, n.total])).toEqual(here.nodes.map((n) => [n.depth, n.self, n.total]));
      expect(there.nodes.some((n) => n.name.includes("dana.kowalski"))).toBe(false);
      const again = await refusal(callService(importBundle, otherCtx, { file: redactedFile }));
      expect(again.code).toBe("INVESTIGATION_EXISTS");
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 120_000);
});
