import { describe, expect, it } from "vitest";
import { quoteValue } from "../src/values";

describe("quoteValue", () => {
  it("shows a small plain object of simple values as written", () => {
    expect(quoteValue({ index: 3, count: 2 })).toBe("{index: 3, count: 2}");
    expect(quoteValue({ "a-b": "x", n: null, u: undefined, ok: false, nan: Number.NaN })).toBe(
      '{"a-b": "x", n: null, u: undefined, ok: false, nan: NaN}',
    );
    expect(quoteValue(Object.assign(Object.create(null), { k: 1 }))).toBe("{k: 1}");
  });

  it("describes, without its values, an object that is large, nested, not plain or has getters", () => {
    expect(quoteValue({ text: "x".repeat(80) })).toBe("an object with keys {text}");
    expect(quoteValue({ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7 })).toBe("an object with keys {a, b, c, d, e, f}");
    expect(quoteValue({ shard: { index: 1 } })).toBe("an object with keys {shard}");
    expect(quoteValue(new Date(0))).toBe("an empty object");
    let read = false;
    const getter = Object.defineProperty({}, "secret", {
      enumerable: true,
      get: () => {
        read = true;
        return 1;
      },
    });
    expect(quoteValue(getter)).toBe("an object with keys {secret}");
    expect(read).toBe(false);
    expect(quoteValue({})).toBe("an empty object");
  });
});
