import { describe, expect, it } from "vitest";
import { colourIndex, PALETTE_SIZE } from "./colour";
import { formatDelta, formatLocation, formatPercent, formatShortLocation, formatValue } from "./format";

describe("values with units", () => {
  it("shows nanoseconds as ms, bytes as KB/MB and counts as samples", () => {
    expect(formatValue(1_234_567, "ns")).toBe("1.23 ms");
    expect(formatValue(123_456_789, "ns")).toBe("123.5 ms");
    expect(formatValue(42_000, "ns")).toBe("0.042 ms");
    expect(formatValue(12_500_000_000, "ns")).toBe("12.5 s");
    expect(formatValue(2048, "bytes")).toBe("2 KB");
    expect(formatValue(5 * 1024 * 1024, "bytes")).toBe("5 MB");
    expect(formatValue(900, "bytes")).toBe("900 B");
    expect(formatValue(1234, "count", "samples")).toBe("1,234 samples");
    expect(formatValue(1, "count", "samples")).toBe("1 sample");
    expect(formatValue(7, "count", "alloc_count")).toBe("7 alloc count");
    expect(formatValue(1000, "Ir")).toBe("1,000 Ir");
  });

  it("formats shares, changes and locations", () => {
    expect(formatPercent(1, 3)).toBe("33.3%");
    expect(formatPercent(1, 100_000)).toBe("0.001%");
    expect(formatPercent(1, 0)).toBe("–");
    expect(formatDelta(-2_000_000, "ns")).toBe("−2 ms");
    expect(formatDelta(3, "count", "samples")).toBe("+3 samples");
    expect(formatLocation("app.js", 12)).toBe("app.js:12");
    expect(formatLocation(null, 3)).toBeNull();
    expect(formatShortLocation("file:///tmp/project/src/app.js", 8)).toBe("…/app.js:8");
    expect(formatShortLocation("node:internal/modules/esm/utils", 282)).toBe("…/utils:282");
    expect(formatShortLocation("app.js", 3)).toBe("app.js:3");
    expect(formatShortLocation(null, 3)).toBeNull();
  });
});

describe("stable colours", () => {
  it("gives the same function the same colour and keeps indices in the palette", () => {
    expect(colourIndex("countPrimes", "app.js", "js")).toBe(colourIndex("countPrimes", "app.js", "js"));
    for (const [name, module, kind] of [["a", null, "js"], ["b", null, "idle"], ["c", "libc.so", "native"], ["d", null, "weird"]] as const) {
      const i = colourIndex(name, module, kind);
      expect(i).toBeGreaterThanOrEqual(0);
      expect(i).toBeLessThan(PALETTE_SIZE - 1);
    }
  });
});
