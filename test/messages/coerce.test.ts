/** Reading what callers pass as a message (src/messages/coerce.ts): refusals name the index, never a raw error. */
import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { readMessage } from "../../src/messages/coerce";
import { repairToolCalls } from "../../src/engine";
import { boundaryError, errorOf, inputError, revokedObject, throwingObject } from "../support/hostile";

describe("readMessage", () => {
  it("a value whose reads throw, or a revoked proxy, is an input error naming the function, with the cause", () => {
    const read = (value: unknown) => () => repairToolCalls([value] as never);
    expect(errorOf(read(throwingObject()))).toMatchObject(boundaryError("repairToolCalls", "GETTER"));
    expect(errorOf(read(revokedObject()))).toMatchObject(boundaryError("repairToolCalls"));
  });

  it("a plain message object becomes its message", () => {
    expect(readMessage({ role: "user", content: "x" }, 0)).toBeInstanceOf(HumanMessage);
  });

  it("a [role, content] tuple (LangChain's MessageLike) becomes its message; an unknown role is refused", () => {
    expect(readMessage(["user", "x"], 2)).toBeInstanceOf(HumanMessage);
    expect(readMessage(["ai", "y"], 2)).toMatchObject({ content: "y" });
    expect(errorOf(() => readMessage(["robot", "x"], 2))).toMatchObject({
      ...inputError("messages", 'messages[2] is a tuple with unknown role "robot"'),
      index: 2,
    });
  });

  it("a stored message with nothing to read is refused, like a plain one (never an empty message)", () => {
    expect(errorOf(() => readMessage({ type: "human", data: {} }, 1))).toMatchObject({
      ...inputError("messages", 'messages[1] is a stored message of type "human" whose data has no content'),
      index: 1,
    });
    expect(readMessage({ type: "human", data: { content: "" } }, 1).content).toBe("");
  });
});
