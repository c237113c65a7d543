import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CSRF_HEADER } from "../../server/http/header-names";
import { MAX_MCP_BODY_BYTES, MAX_TRPC_BODY_BYTES } from "../../server/http/guard";
import { agentToken, callService } from "../../server/services";
import { initWorkspace } from "../../server/store/workspace";
import { workspaceSnapshot } from "../helpers/http-boundary";
import { csrfTokenOf, rawRequest, startServer, type RunningServer } from "../helpers/server";

/**
 * Request bodies are bounded before they are read, on a real `emberscope serve`: a declared
 * length over the bound is refused at once, a body that grows past it is cut, and the server's
 * memory stays where it was (measured from /proc).
 */

const MiB = 1024 * 1024;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

interface Pushed {
  status: number;
  body: string;
  /** Bytes of the body written before the server answered or cut the connection. */
  sent: number;
  ms: number;
}

/**
 * Sends a request on a raw socket and pushes up to `total` body bytes (spaces) as fast as the
 * server takes them, stopping when it answers or closes: the answer is read even while the body
 * is still going (an HTTP client library would report the broken pipe instead).
 */
function pushBody(baseUrl: string, target: string, options: { headers: Record<string, string>; total: number; chunked?: boolean; declaredLength?: number; timeoutMs?: number }): Promise<Pushed> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let sent = 0;
    let done = false;
    const started = performance.now();
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = received.toString("utf8");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), body: text.slice(text.indexOf("\r\n\r\n") + 4), sent, ms: performance.now() - started });
    };
    const timer = setTimeout(finish, options.timeoutMs ?? 30_000);
    socket.on("data", (d: Buffer) => {
      received = Buffer.concat([received, d]);
      const text = received.toString("utf8");
      const end = text.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, end));
      if (end >= 0 && length && received.length - Buffer.byteLength(text.slice(0, end + 4)) >= Number(length[1])) finish();
    });
    socket.on("error", () => undefined);
    socket.on("close", finish);
    const head = [
      `POST ${target} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      ...Object.entries(options.headers).map(([k, v]) => `${k}: ${v}`),
      options.chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${options.declaredLength ?? options.total}`,
      "",
      "",
    ].join("\r\n");
    socket.write(head);
    const chunk = Buffer.alloc(MiB, 0x20);
    const framed = options.chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]) : chunk;
    const pump = () => {
      while (!done && sent < options.total) {
        const piece = options.total - sent < chunk.length && !options.chunked ? chunk.subarray(0, options.total - sent) : framed;
        sent += Math.min(chunk.length, options.total - sent);
        if (!socket.write(piece)) return void socket.once("drain", pump);
      }
      if (!done && options.chunked) socket.write("0\r\n\r\n");
    };
    pump();
  });
}

function errorDocOf(body: string): { code: string; details: Record<string, unknown> } {
  const parsed = JSON.parse(body);
  return parsed.error?.data?.error ?? parsed.error?.data ?? parsed.error;
}

describe("request bodies on `emberscope serve` are bounded before they are read", () => {
  let root: string;
  let server: RunningServer;
  let csrf: string;
  let token: string;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "emberscope-bodies-"));
    initWorkspace(root).close();
    token = (await callService(agentToken, { locator: { cwd: root, projectRoot: root }, actor: "cli" }, {})).token;
    server = await startServer(root, ["--workers", "0"]);
    csrf = await csrfTokenOf(server.url);
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("refuses or cuts 400 MiB bodies on every body-reading route at once, and the server's memory returns to its baseline", async () => {
    // Warm up every route once, so that the baseline holds their code.
    for (const target of ["/", "/settings", "/api/session", "/api/trpc/workspace.status"]) expect((await rawRequest(`${server.url}${target}`)).status).toBe(200);
    const warm = await rawRequest(`${server.url}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(warm.status).toBe(200);
    const baseline = rssOf(server.pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 20);
    const json = { "content-type": "application/json", [CSRF_HEADER]: csrf };
    const mcp = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` };
    try {
      // The finding: a 400 MiB multipart POST to tRPC (it took the server from 148 MB to 1.7 GB).
      const multipart = await pushBody(server.url, "/api/trpc/agent.set_access", { headers: { ...json, "content-type": "multipart/form-data; boundary=x" }, total: 400 * MiB });
      expect(multipart.status, multipart.body).toBe(413);
      expect(errorDocOf(multipart.body)).toMatchObject({ code: "REQUEST_TOO_LARGE", details: { limit: MAX_TRPC_BODY_BYTES } });
      expect(multipart.sent).toBeLessThan(64 * MiB);
      expect(multipart.ms).toBeLessThan(5000);

      // Chunked (no declared length) where one is required: refused before the body.
      const chunkedTrpc = await pushBody(server.url, "/api/trpc/agent.set_access", { headers: json, total: 400 * MiB, chunked: true });
      expect(chunkedTrpc.status, chunkedTrpc.body).toBe(411);
      expect(chunkedTrpc.sent).toBeLessThan(64 * MiB);

      // The finding: /api/mcp with Content-Length: 1 TiB and a 2-byte body never answered.
      const tebibyte = await pushBody(server.url, "/api/mcp", { headers: mcp, total: 2, declaredLength: 1024 ** 4, timeoutMs: 5000 });
      expect(tebibyte.status, tebibyte.body).toBe(413);
      expect(tebibyte.ms).toBeLessThan(2000);
      expect(errorDocOf(tebibyte.body)).toMatchObject({ code: "REQUEST_TOO_LARGE", details: { limit: MAX_MCP_BODY_BYTES } });

      // A chunked MCP body that grows past its bound is cut: answered 413, the rest never read.
      const growing = await pushBody(server.url, "/api/mcp", { headers: mcp, total: 400 * MiB, chunked: true });
      expect(growing.status, growing.body).toBe(413);
      expect(growing.sent).toBeLessThan(64 * MiB);

      // The upload route streams to disk, and refuses a declared size over the import limit at once.
      const upload = await pushBody(server.url, "/api/imports?name=huge.folded", { headers: { [CSRF_HEADER]: csrf }, total: 2, declaredLength: 5 * 1024 ** 3, timeoutMs: 5000 });
      expect(upload.status, upload.body).toBe(413);
      expect(errorDocOf(upload.body).code).toBe("ARTIFACT_TOO_LARGE");

      // Pages take no body worth the name.
      const page = await pushBody(server.url, "/", { headers: { [CSRF_HEADER]: csrf }, total: 400 * MiB });
      expect(page.status, page.body).toBe(413);
      expect(page.sent).toBeLessThan(64 * MiB);
    } finally {
      clearInterval(sampler);
    }
    await new Promise((r) => setTimeout(r, 500));
    const after = rssOf(server.pid);
    expect(peak - baseline, `peak ${peak >> 20} MiB over a baseline of ${baseline >> 20} MiB`).toBeLessThan(100 * MiB);
    expect(after - baseline, `after: ${after >> 20} MiB, baseline ${baseline >> 20} MiB`).toBeLessThan(64 * MiB);
    // The server still answers.
    expect((await rawRequest(`${server.url}/api/trpc/workspace.status`)).status).toBe(200);
  }, 120_000);

  it("answers a tRPC body that is not JSON with 415 and INVALID_ARGUMENTS, and a tRPC-level mistake with a typed error", async () => {
    const before = workspaceSnapshot(root);
    const plain = await rawRequest(`${server.url}/api/trpc/agent.set_access`, { method: "POST", headers: { "content-type": "text/plain", [CSRF_HEADER]: csrf }, body: '{"enabled":true}' });
    expect(plain.status).toBe(415);
    expect(errorDocOf(plain.body)).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "content-type" } });
    const noType = await rawRequest(`${server.url}/api/trpc/agent.set_detail`, { method: "POST", headers: { [CSRF_HEADER]: csrf }, body: '{"detail":"full"}' });
    expect(noType.status).toBe(415);
    expect(errorDocOf(noType.body).code).toBe("INVALID_ARGUMENTS");
    expect(workspaceSnapshot(root)).toEqual(before);
    // A mutation asked with GET, and a path no procedure has: the caller's mistake, typed.
    const byGet = await rawRequest(`${server.url}/api/trpc/agent.set_access?input=${encodeURIComponent('{"enabled":true}')}`);
    expect(byGet.status).toBe(405);
    expect(errorDocOf(byGet.body)).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "method" } });
    const unknown = await rawRequest(`${server.url}/api/trpc/runs.nothing`);
    expect(unknown.status).toBe(404);
    expect(errorDocOf(unknown.body)).toMatchObject({ code: "INVALID_ARGUMENTS", details: { argument: "path" } });
    // A JSON body within the bound reaches the procedure (which refuses its input).
    const within = await rawRequest(`${server.url}/api/trpc/imports.import`, { method: "POST", headers: { "content-type": "application/json", [CSRF_HEADER]: csrf }, body: JSON.stringify({ path: "x".repeat(MAX_TRPC_BODY_BYTES - 64) }) });
    expect(errorDocOf(within.body).code).toBe("INVALID_ARGUMENTS");
    expect(within.status).not.toBe(413);
  });
});
