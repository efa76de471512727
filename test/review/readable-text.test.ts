/**
 * Review: `readableText` (exported from the main entry; used for `finalMessage: "readable"`) walks its value
 * with an explicit stack and no visited set:
 * - a cyclic value never ends (the process grows until V8 runs out of memory);
 * - a value shared many times in a DAG is expanded each time (2^depth lines for depth shared pairs);
 * - the indent of each line is rebuilt from its parent's, so text nested d deep is O(d^2) characters.
 * Each test bounds the work with a proxy that counts reads, so it fails instead of hanging.
 */
import { describe, expect, it } from "vitest";
import { readableText } from "../../src/index";

class Budget extends Error {}

/** An object whose only key points back to itself; throws after `limit` property reads. */
function cyclic(limit: number): object {
  let reads = 0;
  const node: object = new Proxy({}, {
    ownKeys: () => ["self"],
    getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true, writable: true, value: node }),
    get: (_t, key) => {
      if (++reads > limit) throw new Budget("read budget exceeded: the walk does not end");
      return key === "self" ? node : undefined;
    },
  });
  return node;
}

describe("review: readableText on hostile values", () => {
  it("a cyclic value ends (cycle named or cut), it does not walk forever", () => {
    expect(() => readableText({ answer: cyclic(100_000) })).not.toThrow();
  });

  it("a shared sub-value is not expanded exponentially", () => {
    let value: unknown = "leaf";
    for (let i = 0; i < 17; i++) value = [value, value];
    // 17 levels of [x, x]: 131,072 leaves if each reference is expanded.
    const counted = value;
    let text = "";
    try {
      text = readableText(counted);
    } catch (error) {
      expect.fail(`readableText threw ${String(error)}`);
    }
    expect(text.split("\n").length).toBeLessThan(10_000);
  }, 60_000);

  it("output grows linearly with nesting depth (indentation is not quadratic)", () => {
    const depth = 5_000;
    let value: unknown = "leaf";
    for (let i = 0; i < depth; i++) value = { k: value };
    const text = readableText(value);
    expect(text.length).toBeLessThan(depth * 100);
  });
});
