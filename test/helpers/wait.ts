/**
 * Asks `probe` every `stepMs` until `ok` holds of its answer, and returns that answer; past
 * `timeoutMs` it fails with the last answer. Free of vitest, so benchmarks can use it too.
 */
export async function waitFor<T>(probe: () => T | Promise<T>, ok: (value: T) => boolean, timeoutMs = 20_000, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}
