/** The message readers exported to users (src/messages/inspect.ts): any value in, a clear error out. */
import { describe, expect, it } from "vitest";
import { isSyntheticResult, repairMarkerOf } from "../../src/messages/inspect";
import { repairToolCalls } from "../../src/engine";
import { aiWithCalls, human } from "../support/builders";
import { boundaryError, errorOf, revokedObject, throwingObject } from "../support/hostile";

describe("repairMarkerOf / isSyntheticResult", () => {
  it("a value whose reads throw, or a revoked proxy, is an input error naming the function and the message", () => {
    for (const [name, fn] of [
      ["repairMarkerOf", repairMarkerOf],
      ["isSyntheticResult", isSyntheticResult],
    ] as const) {
      expect(errorOf(() => fn(throwingObject()))).toMatchObject(boundaryError(name, "GETTER"));
      expect(errorOf(() => fn(revokedObject()))).toMatchObject(boundaryError(name));
      expect(fn(null)).toBeFalsy();
      expect(fn(42)).toBeFalsy();
    }
  });

  it("still reads the marker of a synthetic result", () => {
    const placeholder = repairToolCalls([human(), aiWithCalls("a"), human("next")]).messages[2];
    expect(isSyntheticResult(placeholder)).toBe(true);
    expect(repairMarkerOf(placeholder)).toMatchObject({ synthetic: true, toolCallId: "a" });
  });
});
