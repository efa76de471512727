/** The builders' public piece (src/messages/build.ts): the default text of a synthetic result. */
import { describe, expect, it } from "vitest";
import { defaultSyntheticText } from "../../src/messages/build";
import { errorOf, inputError, revokedObject, throwingObject } from "../support/hostile";

describe("defaultSyntheticText", () => {
  it("says which call did not run and why", () => {
    expect(defaultSyntheticText({ id: "c1", name: "lookup", reason: "orphan_call" })).toBe(
      'Tool "lookup" (call c1) did not run: the run was interrupted before it returned a result. No result is available; call it again if it is still needed.',
    );
  });

  it("checks its argument: the call, its id, name and note, naming each", () => {
    for (const call of [null, undefined, 42, "c1", revokedObject()]) expect(errorOf(() => defaultSyntheticText(call as never))).toMatchObject(inputError("call"));
    expect(errorOf(() => defaultSyntheticText(throwingObject() as never))).toMatchObject(inputError("call", "could not be read (GETTER)"));
    expect(errorOf(() => defaultSyntheticText({ reason: "x" } as never))).toMatchObject(inputError("call.id", "call.id is undefined; expected a string"));
    expect(errorOf(() => defaultSyntheticText({ id: "c", name: 3, reason: "x" } as never))).toMatchObject(inputError("call.name"));
    expect(errorOf(() => defaultSyntheticText({ id: "c", note: {}, reason: "x" } as never))).toMatchObject(inputError("call.note"));
  });
});
