import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createExportRedaction, createRedactor, type TokenKind } from ".";

const keyed = (key: Buffer) => (kind: TokenKind, value: string) => createHmac("sha256", key).update(`${kind}\0${value}`).digest("hex");
const base = { projectRoot: "/srv/projects/shop", userNames: ["dana"], hostNames: ["buildhost-7.corp.example"] };
const exportOf = (allow: TokenKind[] = [], key = randomBytes(32)) => createExportRedaction({ ...base, tokenFor: keyed(key), allow: new Set(allow) });

describe("export redaction", () => {
  it("keeps a path token's last segment and gives the same path the same token everywhere in one export", () => {
    const r = exportOf();
    const [a, b] = r.column(["/home/dana/src/cart.js", "at /home/dana/src/cart.js:12"], "frames.file");
    expect(a).toMatch(/^PATH_[0-9a-f]{6}\/cart\.js$/);
    expect(b).toBe(`at ${a}:12`);
    expect(r.document({ note: "see /home/dana/src/cart.js" }, "notebook").note).toBe(`see ${a}`);
    expect(r.column(["/srv/projects/shop/src/a.js"], "frames.file")[0]).toBe("src/a.js");
  });

  it("gives another machine's name one token across evidence, span args and notes, keyed per export", () => {
    const r = exportOf();
    const name = r.column(["connect db01.prod.internal"], "spans.name")[0]!;
    const host = name.replace("connect ", "");
    expect(host).toMatch(/^HOST_[0-9a-f]{6}$/);
    const args = r.column([JSON.stringify({ url: "https://db01.prod.internal:5432/shop", peer: "ops@db01" })], "spans.args")[0]!;
    expect(JSON.parse(args).url).toBe(`https://${host}:5432/shop`);
    expect(JSON.parse(args).peer).toMatch(/^USER_[0-9a-f]{6}@HOST_[0-9a-f]{6}$/);
    expect(r.document({ note: "slow on db01.prod.internal" }, "notebook").note).toBe(`slow on ${host}`);
    expect(exportOf().column(["connect db01.prod.internal"], "spans.name")[0]).not.toBe(name);
    expect(r.report().find((e) => e.kind === "HOST")!.count).toBeGreaterThanOrEqual(4);
  });

  it("keys tokens per export: two exports of the same value cannot be joined", () => {
    expect(exportOf().column(["/opt/private/key.pem"], "x")[0]).not.toBe(exportOf().column(["/opt/private/key.pem"], "x")[0]);
  });

  it("drops a last segment that itself names the user or holds a secret", () => {
    const r = exportOf();
    expect(r.column(["/tmp/x/dana"], "f")[0]).toMatch(/^PATH_[0-9a-f]{6}$/);
  });

  it("redacts query values, URL credentials, environment values and env objects in args, and reports kind, count and first place", () => {
    const r = exportOf();
    const [url] = r.column(["GET https://api.example.com/v1/items?user=4217&sort=desc#top"], "spans.name");
    expect(url).toMatch(/^GET https:\/\/api\.example\.com\/v1\/items\?user=QUERY_[0-9a-f]{6}&sort=QUERY_[0-9a-f]{6}#top$/);
    const [cred] = r.column(["postgres://admin:hunter2pass@db.internal:5432/app"], "spans.name");
    expect(cred).not.toContain("hunter2pass");
    const [argv] = r.column(['{"argv": "run LANG_MODE=fastpath", "env": {"SHOP_REGION": "eu-west-9"}}', '{"argv": "x"}'], "spans.args", true);
    expect(argv).not.toContain("fastpath");
    expect(argv).not.toContain("eu-west-9");
    expect(JSON.parse(argv!)).toBeTruthy();
    const report = new Map(r.report().map((e) => [e.kind, e]));
    expect(report.get("QUERY")).toMatchObject({ count: 2, action: "redact", example: "spans.name row 0" });
    expect(report.get("ENV")).toMatchObject({ count: 2, example: "spans.args row 0" });
    expect(report.get("SECRET")!.count).toBeGreaterThanOrEqual(1);
  });

  it("counts but leaves alone the kinds a person allowed", () => {
    const r = exportOf(["EMAIL"]);
    const [out] = r.column(["mail dana.k@example.org from 10.20.30.40"], "spans.name");
    expect(out).toContain("dana.k@example.org");
    expect(out).not.toContain("10.20.30.40");
    const report = new Map(r.report().map((e) => [e.kind, e]));
    expect(report.get("EMAIL")).toMatchObject({ count: 1, action: "allow" });
    expect(report.get("IP")).toMatchObject({ count: 1, action: "redact" });
  });

  it("counts repeated values once per occurrence and leaves null as null", () => {
    const r = exportOf();
    expect(r.column([null, "10.1.1.1", "10.1.1.1"], "t.c")[0]).toBeNull();
    expect(r.report().find((e) => e.kind === "IP")).toMatchObject({ count: 2, example: "t.c row 1" });
  });

  it("leaves the agent boundary's rules unchanged: no query or environment tokens there", () => {
    const agent = createRedactor({ ...base, tokenFor: keyed(randomBytes(8)) });
    expect(agent("https://x.example.com/a?sort=desc LANG_MODE=fast").text).toBe("https://x.example.com/a?sort=desc LANG_MODE=fast");
    expect(agent("/opt/private/key.pem").text).toMatch(/^PATH_[0-9a-f]{6}$/);
  });
});
