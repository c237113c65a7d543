import { describe, expect, it } from "vitest";
import { isPosition, positionBetween, positionsAfter } from "./position";

describe("cell positions (fractional keys)", () => {
  it("makes a key strictly between any two, in string order, without touching either", () => {
    expect(positionBetween(null, null)).toBe("i");
    expect(positionBetween("i", null)).toBe("j");
    expect(positionBetween(null, "i")).toBe("h");
    expect(positionBetween("a", "c")).toBe("b");
    expect(positionBetween("a", "b")).toBe("ai");
    expect(positionBetween("z", null)).toBe("z1");
    expect(positionBetween(null, "1")).toBe("0z");
    expect(() => positionBetween("b", "a")).toThrow(/out of order/);
    expect(() => positionBetween("b0", null)).toThrow(/not a position/);
  });

  it("keeps order through thousands of inserts at random places, with short keys", () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const keys: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const at = Math.floor(random() * (keys.length + 1));
      const key = positionBetween(keys[at - 1] ?? null, keys[at] ?? null);
      expect(isPosition(key)).toBe(true);
      keys.splice(at, 0, key);
    }
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
    expect(Math.max(...keys.map((k) => k.length))).toBeLessThan(12);
  });

  it("appends, prepends and repeated inserts at one place stay short", () => {
    const appended = positionsAfter(null, 500);
    expect([...appended].sort()).toEqual(appended);
    expect(appended.at(-1)!.length).toBeLessThanOrEqual(16);
    let first = "i";
    for (let i = 0; i < 200; i++) first = positionBetween(null, first);
    expect(first.length).toBeLessThanOrEqual(8);
    let high = "j";
    for (let i = 0; i < 200; i++) high = positionBetween("i", high);
    expect(high.length).toBeLessThanOrEqual(45);
    expect("i" < high).toBe(true);
  });
});
