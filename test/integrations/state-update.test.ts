import { AIMessage, HumanMessage, RemoveMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { applyMessagesUpdate, replaceAllMessages } from "../../src/integrations/state-update";
import { boundaryError, errorOf as thrown, inputError, revokedArray, throwingAt } from "../support/hostile";

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
      const sparse = [list[0], , list[1]]; // eslint-disable-line no-sparse-arrays
      expect(thrown(() => fn(sparse as never))).toMatchObject({ ...inputError("messages"), index: 1 });
      // A throwing index is no realistic input: the boundary answers for it, naming the function.
      expect(thrown(() => fn(throwingAt(list, 1)))).toMatchObject(boundaryError(name, "IDX"));
    }
  });
});
