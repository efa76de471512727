import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { ToolCallRepairInputError, createRepairer, findToolCallProblems, repairToolCalls } from "../src";
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

describe("nearestName", () => {
  it("names a close typo and nothing for a distant word", () => {
    expect(nearestName("aply", ["apply", "provider"])).toBe("apply");
    expect(nearestName("colour", ["apply", "provider"])).toBeUndefined();
    // Short names need a closer match: one edit in two letters is another word, not a typo.
    expect(nearestName("ab", ["ax"])).toBeUndefined();
  });
});
