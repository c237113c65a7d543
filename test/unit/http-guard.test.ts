import { describe, expect, it } from "vitest";
import { MAX_APP_BODY_BYTES, MAX_MCP_BODY_BYTES, MAX_TRPC_BODY_BYTES, refusalOf, routePolicy } from "../../server/http/guard";
import { CSRF_HEADER } from "../../server/http/header-names";
import { consumeLaunchSignInCode, csrfVerdict, hasPersonCookie, launchSession, mintLaunchSignInCode, personCookieHeader, type LaunchSession } from "../../server/http/session";

/** A launch session of its own per test (the process's one is shared with nothing here). */
function session(port: number | null = 4000, extraHosts: string[] = []): LaunchSession {
  return { launchId: "srv_test", servedPort: port, extraHosts, csrfToken: "csrf-token-of-this-launch", personToken: "person-token-of-this-launch", codes: new Set() };
}

function headers(values: Record<string, string>): { get(name: string): string | null } {
  const lower = Object.fromEntries(Object.entries(values).map(([k, v]) => [k.toLowerCase(), v]));
  return { get: (name) => lower[name.toLowerCase()] ?? null };
}

function verdict(method: string, path: string, values: Record<string, string>, s = session()): string | null {
  const refusal = refusalOf({ method, path, headers: headers(values), servedPort: null }, s);
  return refusal ? `${refusal.status} ${String(refusal.error.details.reason ?? refusal.error.code)}` : null;
}

describe("the HTTP boundary's rules (server/http/guard.ts)", () => {
  it("takes loopback names and addresses on the served port only, read as a URL reads them", () => {
    for (const host of ["127.0.0.1:4000", "localhost:4000", "LOCALHOST:4000", "[::1]:4000", "127.1:4000", "2130706433:4000", "127.255.0.9:4000", "[0:0:0:0:0:0:0:1]:4000"]) {
      expect(verdict("GET", "/", { host }), host).toBeNull();
    }
    for (const host of ["rebind.evil.example:4000", "localhost.:4000", "127.0.0.1.nip.io:4000", "evil@127.0.0.1:4000", "127.0.0.1:4000/x", "0.0.0.0:4000", "192.168.1.10:4000", "", "127.0.0.1 :4000", "[::ffff:7f00:1]:4000"]) {
      expect(verdict("GET", "/", { host }), JSON.stringify(host)).toBe("403 host_not_loopback");
    }
    expect(verdict("GET", "/", { host: "127.0.0.1:4001" })).toBe("403 host_port_mismatch");
    expect(verdict("GET", "/", { host: "127.0.0.1" })).toBe("403 host_port_mismatch");
    // A non-loopback --host with --allow-remote adds its own address, never a name.
    expect(verdict("GET", "/", { host: "192.168.1.10:4000" }, session(4000, ["192.168.1.10"]))).toBeNull();
  });

  it("refuses a null, foreign or other-port Origin on the workbench's routes; the MCP endpoint takes any loopback page but null", () => {
    const host = "127.0.0.1:4000";
    expect(verdict("GET", "/api/trpc/runs.list", { host, origin: "null" })).toBe("403 origin_null");
    expect(verdict("GET", "/api/trpc/runs.list", { host, origin: "http://evil.example" })).toBe("403 origin_not_loopback");
    expect(verdict("GET", "/api/trpc/runs.list", { host, origin: "http://127.0.0.1:9999" })).toBe("403 origin_not_same");
    expect(verdict("GET", "/api/trpc/runs.list", { host, origin: "https://127.0.0.1:4000" })).toBe("403 origin_not_loopback");
    expect(verdict("GET", "/api/trpc/runs.list", { host, origin: "http://127.0.0.1:4000" })).toBeNull();
    expect(verdict("POST", "/api/mcp", { host, origin: "null" })).toBe("403 origin_null");
    expect(verdict("POST", "/api/mcp", { host, origin: "http://evil.example" })).toBe("403 origin_not_loopback");
    expect(verdict("POST", "/api/mcp", { host, origin: "http://localhost:6274" })).toBeNull();
    expect(verdict("POST", "/api/mcp", { host })).toBeNull();
  });

  it("lets another site link to a page, but not frame it, fetch from it or post to it", () => {
    const host = "127.0.0.1:4000";
    const site = (value: string, mode: string, dest: string) => ({ host, "sec-fetch-site": value, "sec-fetch-mode": mode, "sec-fetch-dest": dest });
    expect(verdict("GET", "/runs/x", site("cross-site", "navigate", "document"))).toBeNull();
    expect(verdict("GET", "/runs/x", site("none", "navigate", "document"))).toBeNull();
    expect(verdict("GET", "/settings", site("cross-site", "navigate", "iframe"))).toBe("403 cross_site");
    expect(verdict("GET", "/api/session", site("same-site", "cors", "empty"))).toBe("403 cross_site");
    expect(verdict("GET", "/api/corpus/objects/sha256/ab", site("cross-site", "no-cors", "image"))).toBe("403 cross_site");
    expect(verdict("POST", "/api/imports", { ...site("cross-site", "no-cors", "empty"), [CSRF_HEADER]: "csrf-token-of-this-launch" })).toBe("403 cross_site");
    expect(verdict("POST", "/api/imports", { ...site("none", "navigate", "document"), [CSRF_HEADER]: "csrf-token-of-this-launch" })).toBe("403 cross_site");
    expect(verdict("POST", "/api/mcp", site("cross-site", "cors", "empty"))).toBe("403 cross_site");
    expect(verdict("POST", "/api/mcp", site("same-site", "cors", "empty"))).toBeNull();
  });

  it("needs this launch's CSRF token on every state-changing request outside MCP, and a browser's Origin with it", () => {
    const host = "127.0.0.1:4000";
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      for (const path of ["/api/trpc/agent.set_access", "/api/imports", "/", "/api/future-route"]) {
        expect(verdict(method, path, { host }), `${method} ${path}`).toBe("403 csrf_token_missing");
        expect(verdict(method, path, { host, [CSRF_HEADER]: "csrf-token-of-another-launch" })).toBe("403 csrf_token_invalid");
        expect(verdict(method, path, { host, [CSRF_HEADER]: "csrf-token-of-this-launch" })).toBeNull();
      }
    }
    expect(verdict("POST", "/api/imports", { host, [CSRF_HEADER]: "csrf-token-of-this-launch", "sec-fetch-site": "same-origin" })).toBe("403 origin_missing");
    expect(verdict("POST", "/api/imports", { host, [CSRF_HEADER]: "csrf-token-of-this-launch", "sec-fetch-site": "same-origin", origin: "http://127.0.0.1:4000" })).toBeNull();
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(verdict(method, "/api/trpc/runs.list", { host })).toBeNull();
  });

  it("bounds each route's body by its declared length before it is read; only uploads and MCP take one without", () => {
    const host = "127.0.0.1:4000";
    const token = { host, [CSRF_HEADER]: "csrf-token-of-this-launch" };
    expect(routePolicy("/api/trpc/x").maxBodyBytes).toBe(MAX_TRPC_BODY_BYTES);
    expect(routePolicy("/api/mcp").maxBodyBytes).toBe(MAX_MCP_BODY_BYTES);
    expect(routePolicy("/runs/x").maxBodyBytes).toBe(MAX_APP_BODY_BYTES);
    expect(routePolicy("/api/mcpx").kind).toBe("app");
    expect(verdict("POST", "/api/trpc/x", { ...token, "content-length": String(MAX_TRPC_BODY_BYTES) })).toBeNull();
    expect(verdict("POST", "/api/trpc/x", { ...token, "content-length": String(MAX_TRPC_BODY_BYTES + 1) })).toBe("413 REQUEST_TOO_LARGE");
    expect(verdict("POST", "/api/mcp", { host, "content-length": String(1024 ** 4) })).toBe("413 REQUEST_TOO_LARGE");
    expect(verdict("POST", "/api/imports", { ...token, "content-length": String(5 * 1024 ** 3) })).toBe("413 ARTIFACT_TOO_LARGE");
    expect(verdict("POST", "/api/trpc/x", { ...token, "transfer-encoding": "chunked" })).toBe("411 INVALID_ARGUMENTS");
    expect(verdict("POST", "/api/imports", { ...token, "transfer-encoding": "chunked" })).toBeNull();
    expect(verdict("POST", "/api/mcp", { host, "transfer-encoding": "chunked" })).toBeNull();
    expect(verdict("POST", "/api/trpc/x", { ...token, "content-length": "12, 13" })).toBe("400 INVALID_ARGUMENTS");
  });

  it("a launch's sign-in code works once; its cookie is HttpOnly, SameSite=Strict, named for the port and checked in constant time", () => {
    const s = launchSession();
    const code = mintLaunchSignInCode(s);
    expect(consumeLaunchSignInCode(code, s)).toBe(true);
    expect(consumeLaunchSignInCode(code, s)).toBe(false);
    expect(consumeLaunchSignInCode("made-up", s)).toBe(false);
    const header = personCookieHeader(4000, s);
    expect(header).toMatch(/^emberscope_person_4000=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    const cookie = header.split(";")[0];
    expect(hasPersonCookie(headers({ cookie: `other=1; ${cookie}` }), 4000, s)).toBe(true);
    expect(hasPersonCookie(headers({ cookie }), 4001, s)).toBe(false);
    expect(hasPersonCookie(headers({ cookie: `${cookie}x` }), 4000, s)).toBe(false);
    expect(hasPersonCookie(headers({}), 4000, s)).toBe(false);
    expect(csrfVerdict(headers({ [CSRF_HEADER]: s.csrfToken }), s)).toBe("ok");
    expect(s.csrfToken).not.toBe(s.personToken);
  });
});
