import { describe, expect, it } from "vitest";
import { finalMessageText, READABLE_MAX_DEPTH, READABLE_MAX_LENGTH, readableText } from "../../src/structured/parse";

describe("readableText", () => {
  it("writes fields as key: value lines, lists as - items, nested values indented", () => {
    expect(
      readableText({ city: "Paris", tempC: 21, tags: ["sunny", "dry"], wind: { kmh: 10, dir: "N" }, none: null }),
    ).toBe(
      [
        "city: Paris",
        "tempC: 21",
        "tags:",
        "  - sunny",
        "  - dry",
        "wind:",
        "  kmh: 10",
        "  dir: N",
        "none: null",
      ].join("\n"),
    );
  });

  it("says when a list or object is empty, and writes scalars as they are", () => {
    expect(readableText({ tags: [], meta: {} })).toBe("tags: (none)\nmeta: (empty)");
    expect(readableText("just text")).toBe("just text");
    expect(readableText([1, 2])).toBe("- 1\n- 2");
  });

  it("does not overflow on a deep value: past READABLE_MAX_DEPTH levels the rest is one line of short JSON", () => {
    let deep: unknown = "end";
    for (let i = 0; i < 20_000; i++) deep = { d: deep };
    const lines = readableText(deep).split("\n");
    expect(lines).toHaveLength(READABLE_MAX_DEPTH + 1);
    const summary = lines[READABLE_MAX_DEPTH];
    expect(summary.startsWith(`${"  ".repeat(READABLE_MAX_DEPTH)}d: {"d":{"d":`)).toBe(true);
    expect(summary.length).toBeLessThan(2 * READABLE_MAX_DEPTH + 250);
  });
});

/** An object whose only key points back to itself; throws after `limit` property reads (a walk that never ends fails). */
function cyclic(limit: number): object {
  let reads = 0;
  const node: object = new Proxy(
    {},
    {
      ownKeys: () => ["self"],
      getOwnPropertyDescriptor: () => ({ enumerable: true, configurable: true, writable: true, value: node }),
      get: (_t, key) => {
        if (++reads > limit) throw new Error("read budget exceeded: the walk does not end");
        return key === "self" ? node : undefined;
      },
    },
  );
  return node;
}

describe("readableText on hostile values: total and linear", () => {
  it("a value that contains itself ends, the cycle written [circular]", () => {
    expect(readableText({ answer: cyclic(100_000) })).toBe("answer:\n  self: [circular]");
    const list: unknown[] = [1];
    list.push(list);
    expect(readableText(list)).toBe("- 1\n- [circular]");
  });

  it("a value shared across the value is written out at most READABLE_MAX_EXPANSIONS times (no 2^depth expansion)", () => {
    let value: unknown = "leaf";
    for (let i = 0; i < 17; i++) value = [value, value]; // 131,072 leaves if each reference were expanded
    const text = readableText(value);
    expect(text.split("\n").length).toBeLessThan(200);
    expect(text).toContain("[repeated, shown above]");
    const shared = { city: "Paris" };
    expect(readableText({ from: shared, to: shared, via: shared })).toBe(
      "from:\n  city: Paris\nto:\n  city: Paris\nvia: [repeated, shown above]",
    );
  });

  it("output stays linear in nesting depth (indentation is capped with the depth)", () => {
    const depth = 5_000;
    let value: unknown = "leaf";
    for (let i = 0; i < depth; i++) value = { k: value };
    expect(readableText(value).length).toBeLessThan(depth * 100);
  });

  it("the text stops at READABLE_MAX_LENGTH characters, saying so; a huge sparse list is not walked", () => {
    const big = Array.from({ length: 50_000 }, (_, i) => `item ${i}`);
    const text = readableText(big);
    expect(text.length).toBeLessThanOrEqual(READABLE_MAX_LENGTH + 100);
    expect(text.endsWith(`[cut at ${READABLE_MAX_LENGTH} characters]`)).toBe(true);
    expect(readableText(new Array(1e9)).length).toBeLessThanOrEqual(READABLE_MAX_LENGTH + 100);
  });

  it("what cannot be read is written [unreadable], never thrown", () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const throwing = Object.defineProperty({}, "x", {
      enumerable: true,
      get: () => {
        throw new Error("boom");
      },
    });
    expect(readableText({ a: proxy, b: throwing, c: 1 })).toBe("a: [unreadable]\nb: [unreadable]\nc: 1");
  });
});

describe("finalMessageText", () => {
  it('"json" (and the default) keeps the JSON; "text" renders; a function decides', () => {
    expect(finalMessageText(undefined, { a: 1 })).toBeUndefined();
    expect(finalMessageText("json", { a: 1 })).toBeUndefined();
    expect(finalMessageText("text", { a: 1 })).toBe("a: 1");
    expect(finalMessageText((v) => `Answer: ${(v as { a: number }).a}`, { a: 1 })).toBe("Answer: 1");
  });

  it("rejects a function that returns no string (an unknown option: test/structured/react-agent.test.ts)", () => {
    expect(() => finalMessageText(() => 1 as never, {})).toThrow(/must return a string/);
  });
});
