/** Reading what callers pass as a message (src/messages/coerce.ts): refusals name the index, never a raw error. */
import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { coerceMessage } from "../../src/messages/coerce";
import { boundaryError, errorOf, inputError, revokedObject, throwingObject } from "../support/hostile";

describe("coerceMessage", () => {
  it("a value whose reads throw, or a revoked proxy, is an input error naming the function, with the cause", () => {
    expect(errorOf(() => coerceMessage(throwingObject(), 3))).toMatchObject(boundaryError("coerceMessage", "GETTER"));
    expect(errorOf(() => coerceMessage(revokedObject(), 0))).toMatchObject(boundaryError("coerceMessage"));
  });

  it("a plain message object becomes its message", () => {
    expect(coerceMessage({ role: "user", content: "x" }, 0)).toBeInstanceOf(HumanMessage);
  });

  it("a [role, content] tuple (LangChain's MessageLike) becomes its message; an unknown role is refused", () => {
    expect(coerceMessage(["user", "x"], 2)).toBeInstanceOf(HumanMessage);
    expect(coerceMessage(["ai", "y"], 2)).toMatchObject({ content: "y" });
    expect(errorOf(() => coerceMessage(["robot", "x"], 2))).toMatchObject({
      ...inputError("messages", 'messages[2] is a tuple with unknown role "robot"'),
      index: 2,
    });
  });

  it("a stored message with nothing to read is refused, like a plain one (never an empty message)", () => {
    expect(errorOf(() => coerceMessage({ type: "human", data: {} }, 1))).toMatchObject({
      ...inputError("messages", 'messages[1] is a stored message of type "human" whose data has no content'),
      index: 1,
    });
    expect(coerceMessage({ type: "human", data: { content: "" } }, 1).content).toBe("");
  });
});
