import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CSRF_HEADER } from "../../server/http/header-names";
import { callService, importArtifact } from "../../server/services";
import { removeLeftWarmUps, startWarmUp, WARM_UP_PROFILE, warmUpImportAndOpen, warmUpProfile, warmUpState } from "../../server/services/warm-up";
import { initWorkspace } from "../../server/store/workspace";
import { workspaceSnapshot } from "../helpers/http-boundary";
import { csrfTokenOf, rawRequest, startServer, waitForWarmUp, type RunningServer } from "../helpers/server";

/**
 * `serve`'s start-up warm-up (server/services/warm-up.ts): the drop's import and the run page's
 * first flame tree run once on a made profile, in a throwaway workspace under the OS temp folder
 * (the server's TMPDIR here, a folder of the test's own), never in the person's workspace, and
 * leave no file behind; a warm-up that fails changes nothing either, and the server serves on.
 */

const made: string[] = [];
const folder = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A project with one imported run: what the warm-up must leave as it was. */
async function projectWithARun(): Promise<string> {
  const root = folder("emberscope-warm-up-project-");
  initWorkspace(root).close();
  writeFileSync(path.join(root, "seed.folded"), "main;parse;tokenize 5\nmain;render 3\n");
  await callService(importArtifact, { locator: { cwd: root, projectRoot: root }, actor: "cli" }, { path: "seed.folded" });
  return root;
}

/** The workspace's records and files, but for the running servers' registrations (this server's own). */
function userWorkspace(root: string): Record<string, unknown> {
  const snapshot = workspaceSnapshot(root);
  const { servers: _servers, ...counts } = snapshot.counts as Record<string, number>;
  return { ...snapshot, counts };
}

/** Uploads a profile as the home page's drop does; the answer's status and body. */
async function upload(server: RunningServer, name: string, body: string) {
  const csrf = await csrfTokenOf(server.url);
  return rawRequest(`${server.url}/api/imports?name=${name}`, { method: "POST", headers: { origin: server.url, "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", [CSRF_HEADER]: csrf }, body });
}

describe("the warm-up, in this process", () => {
  it("fails without leaving anything when its folder cannot be used, and a failed start is recorded, not thrown", async () => {
    const notAFolder = path.join(folder("emberscope-warm-up-file-"), "plain-file");
    writeFileSync(notAFolder, "");
    await expect(warmUpImportAndOpen(notAFolder)).rejects.toThrow();
    const ended = await startWarmUp(() => Promise.reject(new Error("the warm-up broke")));
    expect(ended).toMatchObject({ state: "failed", error: "the warm-up broke" });
    expect(ended.ms).toBeGreaterThanOrEqual(0);
    expect(warmUpState().state).toBe("failed");
    // Once per process: a second start returns the first one's end.
    expect(await startWarmUp()).toEqual(ended);
  });

  it("imports and opens a made profile in a workspace under the folder it is given, then deletes it; first it removes those of warm-ups that never ended, and nothing else", async () => {
    const temp = folder("emberscope-warm-up-left-");
    const old = (name: string) => {
      const dir = path.join(temp, name);
      mkdirSync(path.join(dir, ".emberscope"), { recursive: true });
      const hourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(dir, hourAgo, hourAgo);
      return dir;
    };
    old("emberscope-warm-up-died1");
    old("another-tool-folder");
    mkdirSync(path.join(temp, "emberscope-warm-up-under-way"));
    writeFileSync(path.join(temp, "emberscope-warm-up-a-file"), "");
    utimesSync(path.join(temp, "emberscope-warm-up-a-file"), new Date(0), new Date(0));
    await removeLeftWarmUps(temp);
    expect(readdirSync(temp).sort()).toEqual(["another-tool-folder", "emberscope-warm-up-a-file", "emberscope-warm-up-under-way"]);
    // A warm-up sweeps before it starts: the left folder of a dead server goes, and its own workspace is gone when it ends.
    old("emberscope-warm-up-died2");
    await warmUpImportAndOpen(temp);
    expect(readdirSync(temp).sort()).toEqual(["another-tool-folder", "emberscope-warm-up-a-file", "emberscope-warm-up-under-way"]);
  }, 60_000);

  it("makes a V8 cpuprofile of the size asked", () => {
    const profile = JSON.parse(warmUpProfile(WARM_UP_PROFILE.samples, WARM_UP_PROFILE.nodes)) as { nodes: unknown[]; samples: number[]; timeDeltas: number[] };
    expect(profile.nodes).toHaveLength(WARM_UP_PROFILE.nodes);
    expect(profile.samples).toHaveLength(WARM_UP_PROFILE.samples);
    expect(profile.timeDeltas).toHaveLength(WARM_UP_PROFILE.samples);
  });
});

describe("the warm-up of `emberscope serve`", () => {
  let root: string;
  let temp: string;
  let server: RunningServer;
  let before: Record<string, unknown>;

  beforeAll(async () => {
    root = await projectWithARun();
    before = userWorkspace(root);
    temp = folder("emberscope-warm-up-server-tmp-");
    server = await startServer(root, ["--workers", "0"], undefined, { TMPDIR: temp, EMBERSCOPE_WARM_UP: "1" });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("runs once the server listens, leaves the person's workspace as it was and no file in the temp folder", async () => {
    const state = await waitForWarmUp(server.url);
    expect(state).toMatchObject({ state: "done", error: null });
    expect(state!.ms).toBeGreaterThan(0);
    expect(userWorkspace(root)).toEqual(before);
    expect(readdirSync(temp)).toEqual([]);
    // The drop after it imports into the person's workspace, and nowhere else.
    const answer = await upload(server, "dropped.folded", "main;work 7\n");
    expect(answer.status, answer.body).toBe(200);
    expect((userWorkspace(root).counts as Record<string, number>).runs).toBe((before.counts as Record<string, number>).runs + 1);
    expect(readdirSync(temp)).toEqual([]);
  }, 60_000);
});

describe("a warm-up of `emberscope serve` that fails", () => {
  let root: string;
  let server: RunningServer;
  let before: Record<string, unknown>;

  beforeAll(async () => {
    root = await projectWithARun();
    before = userWorkspace(root);
    // The OS temp folder is a plain file: the throwaway workspace cannot be made.
    const notAFolder = path.join(folder("emberscope-warm-up-server-file-"), "plain-file");
    writeFileSync(notAFolder, "");
    server = await startServer(root, ["--workers", "0"], undefined, { TMPDIR: notAFolder, EMBERSCOPE_WARM_UP: "1" });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("is recorded as failed, changes nothing, and the server imports the next drop", async () => {
    const state = await waitForWarmUp(server.url);
    expect(state?.state).toBe("failed");
    expect(state?.error).not.toContain(root);
    expect(userWorkspace(root)).toEqual(before);
    const answer = await upload(server, "dropped.folded", "main;work 7\n");
    expect(answer.status, answer.body).toBe(200);
    expect((userWorkspace(root).counts as Record<string, number>).runs).toBe((before.counts as Record<string, number>).runs + 1);
  }, 60_000);
});

describe("a server started with EMBERSCOPE_WARM_UP=0", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(await projectWithARun(), ["--workers", "0"], undefined, { EMBERSCOPE_WARM_UP: "0" });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("says its warm-up is off", async () => {
    expect((await waitForWarmUp(server.url))?.state).toBe("off");
  });
});
