/** The profiles' rows name only problem kinds the engine has (the union `ToolCallProblemKind` of src/types.ts). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { profileFor } from "../../src/engine/profiles";
import { PROVIDERS } from "../../src/types";

describe("the rules of every profile", () => {
  const types = readFileSync(new URL("../../src/types.ts", import.meta.url), "utf8");
  const start = types.indexOf("export type ToolCallProblemKind =");
  const union = types.slice(start, types.indexOf("\nexport ", start + 1));
  const kinds = new Set([...union.matchAll(/\| "(\w+)"/g)].map(([, kind]) => kind));

  it("reads the union", () => expect(kinds.has("orphan_call") && kinds.has("duplicate_response_item")).toBe(true));

  for (const provider of PROVIDERS)
    it(`${provider}: every problem a rule names is a ToolCallProblemKind`, () => {
      for (const kind of Object.keys(profileFor(provider).rules)) expect(kinds, kind).toContain(kind);
    });
});
