import { describe, expect, it } from "vitest";
import { assertFinalMessageOption, finalMessageText, readableText } from "../../src/structured/final-message";

describe("readableText", () => {
  it("writes fields as key: value lines, lists as - items, nested values indented", () => {
    expect(readableText({ city: "Paris", tempC: 21, tags: ["sunny", "dry"], wind: { kmh: 10, dir: "N" }, none: null })).toBe(
      ["city: Paris", "tempC: 21", "tags:", "  - sunny", "  - dry", "wind:", "  kmh: 10", "  dir: N", "none: null"].join("\n"),
    );
  });

  it("says when a list or object is empty, and writes scalars as they are", () => {
    expect(readableText({ tags: [], meta: {} })).toBe("tags: (none)\nmeta: (empty)");
    expect(readableText("just text")).toBe("just text");
    expect(readableText([1, 2])).toBe("- 1\n- 2");
  });

  it("does not overflow on a deep value", () => {
    let deep: unknown = "end";
    for (let i = 0; i < 20_000; i++) deep = { d: deep };
    expect(readableText(deep).split("\n")).toHaveLength(20_000);
  });
});

describe("finalMessageText", () => {
  it('"json" (and the default) keeps the JSON; "text" renders; a function decides', () => {
    expect(finalMessageText(undefined, { a: 1 })).toBeUndefined();
    expect(finalMessageText("json", { a: 1 })).toBeUndefined();
    expect(finalMessageText("text", { a: 1 })).toBe("a: 1");
    expect(finalMessageText((v) => `Answer: ${(v as { a: number }).a}`, { a: 1 })).toBe("Answer: 1");
  });

  it("rejects an unknown option and a function that returns no string", () => {
    expect(() => assertFinalMessageOption("yaml")).toThrow(TypeError);
    expect(() => finalMessageText(() => 1 as never, {})).toThrow(/must return a string/);
  });
});
