/** The builders' public piece (src/messages/build.ts): the default text of a synthetic result. */
import { describe, expect, it } from "vitest";
import { defaultSyntheticText } from "../../src/messages/build";
import { boundaryError, errorOf, revokedObject, throwingObject } from "../support/hostile";

describe("defaultSyntheticText", () => {
  it("claims only what is known: no result recorded by default, never that a tool which may have started did not run", () => {
    const unknown = defaultSyntheticText({ id: "c1", name: "lookup", reason: "orphan_call" });
    // A history alone cannot say why a call has no result: it does not claim that a run stopped.
    expect(unknown).toBe(
      'Tool "lookup" (call c1) has no result: no result was recorded for it. It may ' +
        "have started, and may have taken effect; " +
        "its outcome is unknown. Do not call it again without first checking whether it already took effect.",
    );
    expect(defaultSyntheticText({ id: "c1", name: "lookup", reason: "orphan_call", toolRun: "outcome_unknown" })).toBe(
      unknown,
    );
    expect(unknown).not.toMatch(/did not run|call it again if|run stopped/);
  });

  it("says the run stopped only for a call whose run is known to have stopped (interrupted)", () => {
    expect(defaultSyntheticText({ id: "c1", name: "pay", reason: "orphan_call", toolRun: "interrupted" })).toBe(
      'Tool "pay" (call c1) has no result: the run stopped before its result was recorded. It may ' +
        "have started, and may have taken effect; " +
        "its outcome is unknown. Do not call it again without first checking whether it already took effect.",
    );
  });

  it("tells the model a read-only tool can simply be called again; the others keep the advice to check first", () => {
    for (const toolRun of ["outcome_unknown", "interrupted"] as const)
      expect(
        defaultSyntheticText({ id: "c1", name: "search_flights", reason: "orphan_call", toolRun, readOnly: true }),
      ).toMatch(
        /^Tool "search_flights" \(call c1\) has no result: .*\. It is read-only, so it can simply be called again/,
      );
    // What a person must approve, or what never started, is said as before, read-only or not.
    expect(
      defaultSyntheticText({ id: "c1", name: "pay", reason: "orphan_call", toolRun: "cancelled", readOnly: true }),
    ).toMatch(/Do not run it unless the user asks for it again\.$/);
    expect(defaultSyntheticText({ id: "c1", name: "pay", reason: "orphan_call", readOnly: false })).toMatch(
      /first checking whether it already took effect\.$/,
    );
  });

  it("says a call that never started did not run, and a cancelled one is not to be run unasked", () => {
    expect(
      defaultSyntheticText({
        id: "c1",
        name: "lookup",
        reason: "invalid_tool_call",
        note: "its arguments did not parse",
        toolRun: "never_started",
      }),
    ).toBe(
      'Tool "lookup" (call c1) did not run: its arguments did not parse. No result is available; call it again if it is still needed.',
    );
    expect(defaultSyntheticText({ id: "c1", name: "pay", reason: "orphan_call", toolRun: "cancelled" })).toBe(
      'Tool "pay" (call c1) did not run: it was waiting for the user\'s approval, and the user sent a new message instead. ' +
        "Do not run it unless the user asks for it again.",
    );
  });

  it("what it cannot read is its boundary's input error, naming the function", () => {
    for (const call of [null, undefined, revokedObject()])
      expect(errorOf(() => defaultSyntheticText(call as never))).toMatchObject(boundaryError("defaultSyntheticText"));
    expect(errorOf(() => defaultSyntheticText(throwingObject() as never))).toMatchObject(
      boundaryError("defaultSyntheticText", "GETTER"),
    );
  });
});
