import { AIMessage, HumanMessage, RemoveMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { ToolCallRepairInputError } from "../../src/errors";
import { applyMessagesUpdate, replaceAllMessages } from "../../src/integrations/state-update";
import { boundaryError, errorOf as thrown, inputError, revokedArray, throwingAt } from "../support/hostile";

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
    const out = applyMessagesUpdate(current, [
      new AIMessage({ content: "a2", id: "a1" }),
      new RemoveMessage({ id: "h1" }),
      { role: "user", content: "next" } as never,
    ]);
    expect(out.map((m) => [m.type, m.content])).toEqual([
      ["ai", "a2"],
      ["human", "next"],
    ]);
    expect(typeof out[1].id).toBe("string");
  });

  it("what is not a message is an input error naming the argument and index, not LangChain's 'Unable to coerce message from array'", () => {
    expect(errorOf(() => applyMessagesUpdate(current, [{} as never]))).toMatchObject({
      argument: "update",
      index: 0,
      message: expect.stringContaining("update[0] is an empty object"),
    });
    expect(errorOf(() => applyMessagesUpdate(current, 5 as never))).toMatchObject({ argument: "update", index: 0 });
    expect(errorOf(() => applyMessagesUpdate(current, [new HumanMessage("x"), null as never]))).toMatchObject({
      argument: "update",
      index: 1,
    });
    expect(errorOf(() => applyMessagesUpdate([{}] as never, []))).toMatchObject({ argument: "current", index: 0 });
    expect(errorOf(() => applyMessagesUpdate("x" as never, []))).toMatchObject({ argument: "current" });
  });

  it("the reducer's own refusal (removing an id that is not there) is an input error about the update", () => {
    expect(errorOf(() => applyMessagesUpdate(current, [new RemoveMessage({ id: "missing" })]))).toMatchObject({
      argument: "update",
    });
  });
});

describe("argument checks: an input error naming the argument (and the index), never a raw error", () => {
  const list = [new HumanMessage({ content: "q", id: "h1" }), new AIMessage({ content: "a", id: "a1" })];

  it("replaceAllMessages takes an array of LangChain messages", () => {
    for (const [name, fn] of [["replaceAllMessages", replaceAllMessages]] as const) {
      expect(thrown(() => fn(null as never))).toMatchObject(
        inputError("messages", `${name}: messages is null; expected an array of messages`),
      );
      expect(thrown(() => fn(undefined as never))).toMatchObject(
        inputError("messages", `${name}: messages is undefined`),
      );
      expect(thrown(() => fn(revokedArray()))).toMatchObject(inputError("messages", "an unreadable object"));
      expect(thrown(() => fn([null] as never))).toMatchObject({
        ...inputError("messages", `${name}: messages[0] is null, not a LangChain message`),
        index: 0,
      });
      expect(thrown(() => fn([list[0], { role: "user", content: "x" }] as never))).toMatchObject({ index: 1 });
      expect(thrown(() => fn([list[0], , list[1]] as never))).toMatchObject({
        ...inputError("messages", "messages[1] is a hole"),
        index: 1,
      }); // eslint-disable-line no-sparse-arrays
      // A throwing index is no realistic input: the boundary answers for it, naming the function.
      expect(thrown(() => fn(throwingAt(list, 1)))).toMatchObject(boundaryError(name, "IDX"));
    }
  });

  it("applyMessagesUpdate: a throwing index or a revoked update is the boundary's input error, naming the function", () => {
    // No realistic input: the boundary answers for it, naming the function, with the cause.
    const fn = "applyMessagesUpdate";
    expect(thrown(() => applyMessagesUpdate(throwingAt(list, 1), []))).toMatchObject(boundaryError(fn, "IDX"));
    expect(thrown(() => applyMessagesUpdate(list, throwingAt(list, 0)))).toMatchObject(boundaryError(fn, "IDX"));
    expect(thrown(() => applyMessagesUpdate(list, revokedArray() as never))).toMatchObject(boundaryError(fn));
    expect(thrown(() => applyMessagesUpdate(revokedArray(), []))).toMatchObject(inputError("current"));
  });
});
