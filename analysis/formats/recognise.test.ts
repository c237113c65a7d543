// Files written by real tools on this machine (zip, tar, zstd, bzip2, xz, sqlite3, node itself) and
// speedscope's sample profiles of formats Emberscope has no importer for.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { peerFixture } from "../../test/helpers/evidence-rows";
import { headText } from "../io/text";
import { recogniseFormat, topLevelJsonKeys } from "./recognise";

const HEAD = 64 * 1024;
const recognised = (bytes: Uint8Array) => recogniseFormat(bytes.subarray(0, HEAD), headText(bytes.subarray(0, HEAD)))?.id ?? null;

describe("recogniseFormat", () => {
  it("names the formats of real profiles it cannot read by their JSON keys, magic bytes or first line", () => {
    expect(recognised(peerFixture("Firefox/63/simple-firefox.json"))).toBe("firefox-profiler");
    expect(recognised(peerFixture("Safari/13.1/simple.html-recording.json"))).toBe("safari-timeline");
    expect(recognised(peerFixture("stackprof/simple-stackprof.json"))).toBe("stackprof");
    expect(recognised(peerFixture("java-flight-recorder/heavy.jfr"))).toBe("jfr");
    expect(recognised(peerFixture("Instruments/16.0/simple-time-profile-deep-copy.txt"))).toBe("instruments-deep-copy");
    // Gecko's own profile (and samply's) has meta and threads at its top.
    expect(recognised(new TextEncoder().encode(JSON.stringify({ meta: { version: 24, interval: 1 }, libs: [], threads: [{ samples: {} }] })))).toBe("firefox-profiler");
  });

  it("names archives, compressed files and other files written by the tools here", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "emberscope-recognise-"));
    const folded = path.join(dir, "app.folded");
    writeFileSync(folded, "main;work 3\nmain 1\n");
    const made = (name: string, command: string, args: string[]) => {
      execFileSync(command, args, { cwd: dir, stdio: "ignore" });
      return new Uint8Array(readFileSync(path.join(dir, name)));
    };
    expect(recognised(made("app.zip", "zip", ["-q", "app.zip", "app.folded"]))).toBe("zip");
    expect(recognised(made("app.tar", "tar", ["-cf", "app.tar", "app.folded"]))).toBe("tar");
    expect(recognised(made("app.folded.zst", "zstd", ["-q", "-k", "app.folded"]))).toBe("zstd");
    expect(recognised(made("app.folded.bz2", "bzip2", ["-k", "app.folded"]))).toBe("bzip2");
    expect(recognised(made("app.folded.xz", "xz", ["-k", "app.folded"]))).toBe("xz");
    expect(recognised(made("runs.db", "sqlite3", ["runs.db", "CREATE TABLE t (x); INSERT INTO t VALUES (1);"]))).toBe("sqlite");
    expect(recognised(new Uint8Array(readFileSync(process.execPath).subarray(0, HEAD)))).toBe("elf");
    const page = new TextEncoder().encode("<!-- saved -->\n<!DOCTYPE html><html><body><script>profile = {}</script></body></html>");
    expect(recognised(page)).toBe("html");
    const svg = new TextEncoder().encode('<?xml version="1.0" standalone="no"?>\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x">\n<svg version="1.1" width="1200">');
    expect(recognised(svg)).toBe("svg");
  });

  it("says a JSON object of no known format is JSON, and recognises nothing in plain text or random bytes", () => {
    expect(recognised(new TextEncoder().encode('{"hello": [1, 2], "world": {"a": "}"}}'))).toBe("json");
    expect(recognised(new TextEncoder().encode("just some notes\nabout a run\n"))).toBeNull();
    expect(recognised(Uint8Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) & 0xff))).toBeNull();
  });

  it("reads the top-level keys of a JSON object as far as its head goes, skipping nested values and strings", () => {
    expect(topLevelJsonKeys(' {"a": {"b": [1, {"c": 2}]}, "d\\"e": "x,}", "f": 3}')).toEqual(new Set(["a", 'd"e', "f"]));
    // Cut inside a value: the keys before it are known.
    expect(topLevelJsonKeys('{"meta": {"version": 24}, "threads": [{"name": "Gecko')).toEqual(new Set(["meta", "threads"]));
    expect(topLevelJsonKeys("[1, 2]")).toBeNull();
    expect(topLevelJsonKeys("{oops}")).toBeNull();
  });
});
