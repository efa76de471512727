import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import {
  ToolCallRepairInputError,
  createRepairer,
  findToolCallProblems,
  repairToolCalls,
  trimMessagesSafely,
} from "../src";
import { ENGINE_OPTIONS } from "../src/engine";
import { toolCallRepairMiddleware } from "../src/langchain";
import { scanThreads } from "../src/threads";
import { nearestName } from "../src/values";

// A call left without its result, then a new user turn.
const history = [
  new HumanMessage("hi"),
  new AIMessage({ content: "", tool_calls: [{ id: "a", name: "t", args: {} }] }),
  new HumanMessage("never mind"),
];

describe("options a surface does not declare", () => {
  it("are refused, naming the key and the nearest option, instead of leaving the option at its default", () => {
    // A typo used to be ignored: `orphanCall: "remove"` left orphan calls answered with placeholders.
    expect(() => repairToolCalls(history, { orphanCall: "remove" } as never)).toThrow(ToolCallRepairInputError);
    expect(() => repairToolCalls(history, { orphanCall: "remove" } as never)).toThrow(
      /repairToolCalls: options\.orphanCall is not an option \(did you mean orphanCalls\?\); its options are provider, /,
    );
    expect(() => createRepairer({ onrepair: () => {} } as never)).toThrow(
      /options\.onrepair .*did you mean onRepair\?/,
    );
    expect(() => findToolCallProblems(history, { colour: "red" } as never)).toThrow(
      /findToolCallProblems: options\.colour is not an option; its options are/,
    );
  });

  it("are not confused with declared options, which keep working", () => {
    const answered = repairToolCalls(history, { provider: "openai" });
    const removed = repairToolCalls(history, { orphanCalls: "remove", provider: "openai" });
    expect(answered.messages.map((m) => m.getType())).toEqual(["human", "ai", "tool", "human"]);
    expect(removed.messages.map((m) => m.getType())).not.toContain("tool");
    expect(findToolCallProblems(history, { provider: "openai" })).not.toEqual([]);
  });
});

describe("an option value that is a typo of one it takes", () => {
  // The second letter dropped: one edit from the value meant, further from every other one.
  const typo = (value: string) => value[0] + value.slice(2);

  it("names the nearest value, for every option that takes one of a list", () => {
    const listed = Object.entries(ENGINE_OPTIONS).filter(([, kind]) => kind.values);
    expect(listed.map(([key]) => key)).toEqual(expect.arrayContaining(["provider", "trailing", "orphanCalls"]));
    for (const [key, { values }] of listed)
      for (const value of values!)
        expect(() => repairToolCalls(history, { [key]: typo(value) } as never)).toThrow(
          `options.${key} is "${typo(value)}" (did you mean "${value}"?); expected one of ${values!.join(", ")}`,
        );
  });

  it("on every surface and entry that reads one (the option reader is the one place)", async () => {
    expect(() => toolCallRepairMiddleware({ provider: "bedrok" as never })).toThrow(
      'toolCallRepairMiddleware: options.provider is "bedrok" (did you mean "bedrock"?); expected one of openai,',
    );
    await expect(
      trimMessagesSafely(history, { maxTokens: 10, tokenCounter: () => 1, strategy: "lst" as never }),
    ).rejects.toThrow('options.strategy is "lst" (did you mean "last"?)');
    expect(() => scanThreads(new MemorySaver(), { provider: "gemni" as never })).toThrow(/did you mean "gemini"\?/);
  });

  it("suggests nothing for a value far from all of them, or one that is not a string", () => {
    expect(() => repairToolCalls(history, { provider: "mistral" as never })).toThrow(
      /options\.provider is "mistral"; expected one of/,
    );
    expect(() => repairToolCalls(history, { provider: 7 as never })).toThrow(/options\.provider is 7; expected one of/);
  });
});

describe("nearestName", () => {
  it("names a close typo and nothing for a distant word", () => {
    expect(nearestName("aply", ["apply", "provider"])).toBe("apply");
    expect(nearestName("colour", ["apply", "provider"])).toBeUndefined();
    // Short names need a closer match: one edit in two letters is another word, not a typo.
    expect(nearestName("ab", ["ax"])).toBeUndefined();
  });
});
