import { afterEach, describe, expect, it, vi } from "vitest";
import { watchForSilence } from "../../server/evidence/range-thread";

describe("the range thread's silence watch", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("stays quiet while it hears from the thread within its time, however long that goes on", () => {
    vi.useFakeTimers();
    let silent = 0;
    const watch = watchForSilence(500, () => silent++);
    for (let step = 0; step < 20; step++) {
      vi.advanceTimersByTime(400);
      watch.heard();
    }
    expect(silent).toBe(0);
    vi.advanceTimersByTime(499);
    expect(silent).toBe(0);
    vi.advanceTimersByTime(1);
    expect(silent).toBe(1);
  });

  it("never calls once stopped, even when heard from again", () => {
    vi.useFakeTimers();
    let silent = 0;
    const watch = watchForSilence(500, () => silent++);
    vi.advanceTimersByTime(300);
    watch.stop();
    watch.heard();
    vi.advanceTimersByTime(5_000);
    expect(silent).toBe(0);
  });
});
