import { AIMessage, HumanMessage, RemoveMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { ToolCallRepairInputError } from "../../src/errors";
import { applyMessagesUpdate } from "../../src/integrations/state-update";

const errorOf = (fn: () => unknown): ToolCallRepairInputError => {
  try {
    fn();
  } catch (error) {
    if (ToolCallRepairInputError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("did not throw");
};

describe("applyMessagesUpdate", () => {
  const current = [new HumanMessage({ content: "q", id: "h1" }), new AIMessage({ content: "a", id: "a1" })];

  it("applies what the reducer applies: replacement by id, removal, message-likes coerced as LangChain does", () => {
    const out = applyMessagesUpdate(current, [new AIMessage({ content: "a2", id: "a1" }), new RemoveMessage({ id: "h1" }), { role: "user", content: "next" } as never]);
    expect(out.map((m) => [m.type, m.content])).toEqual([["ai", "a2"], ["human", "next"]]);
    expect(typeof out[1].id).toBe("string");
  });

  it("what is not a message is an input error naming the argument and index, not LangChain's 'Unable to coerce message from array'", () => {
    expect(errorOf(() => applyMessagesUpdate(current, [{} as never]))).toMatchObject({ argument: "update", index: 0, message: expect.stringContaining("update[0] is an empty object") });
    expect(errorOf(() => applyMessagesUpdate(current, 5 as never))).toMatchObject({ argument: "update", index: 0 });
    expect(errorOf(() => applyMessagesUpdate(current, [new HumanMessage("x"), null as never]))).toMatchObject({ argument: "update", index: 1 });
    expect(errorOf(() => applyMessagesUpdate([{}] as never, []))).toMatchObject({ argument: "current", index: 0 });
    expect(errorOf(() => applyMessagesUpdate("x" as never, []))).toMatchObject({ argument: "current" });
  });

  it("the reducer's own refusal (removing an id that is not there) is an input error about the update", () => {
    expect(errorOf(() => applyMessagesUpdate(current, [new RemoveMessage({ id: "missing" })]))).toMatchObject({ argument: "update" });
  });
});
