/** The recovery step's public reader (src/recovery/retry.ts). */
import { describe, expect, it } from "vitest";
import { REJECTION_DIAGNOSIS_KEY, rejectionDiagnosisOf } from "../../src/recovery/retry";
import { revokedObject, throwingObject } from "../support/hostile";

describe("rejectionDiagnosisOf", () => {
  it("reads the diagnosis a surface attached, and takes any value (like parseToolPairingError)", () => {
    const diagnosis = { rejection: {}, repairs: [], retried: false };
    expect(rejectionDiagnosisOf(Object.assign(new Error("x"), { [REJECTION_DIAGNOSIS_KEY]: diagnosis }))).toBe(
      diagnosis,
    );
    for (const value of [null, undefined, 42, "x", new Error("plain"), throwingObject(), revokedObject()])
      expect(rejectionDiagnosisOf(value)).toBeUndefined();
  });
});
