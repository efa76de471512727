/** The payload validators on the reasoning-era rules: R6 and R7 (Responses), G6 (Gemini 3+). */
import { describe, expect, it } from "vitest";
import { ToolCallRepairInputError } from "../../../src/errors";
import { validateGeminiContents, validateOpenAIResponsesInput } from ".";

const user = (text: string) => ({ type: "message", role: "user", content: text });
const reasoning = (id: string) => ({ type: "reasoning", id, summary: [] });
const call = (id: string, callId: string) => ({
  type: "function_call",
  id,
  call_id: callId,
  name: "f",
  arguments: "{}",
});
const output = (callId: string) => ({ type: "function_call_output", call_id: callId, output: "ok" });
const rules = (violations: { rule: string }[]) => violations.map((v) => v.rule);

describe("validateOpenAIResponsesInput: R6, R7", () => {
  it("R7 without stored outputs: a reasoning item must be followed by an output item", () => {
    expect(
      rules(validateOpenAIResponsesInput([user("q"), reasoning("rs_1"), call("fc_1", "c1"), output("c1")])),
    ).toEqual([]);
    expect(rules(validateOpenAIResponsesInput([user("q"), reasoning("rs_1"), user("next")]))).toEqual(["R7"]);
    expect(rules(validateOpenAIResponsesInput([user("q"), reasoning("rs_1")]))).toEqual(["R7"]);
    expect(
      validateOpenAIResponsesInput([
        reasoning("rs_1"),
        reasoning("rs_2"),
        { type: "message", role: "assistant", content: "a" },
      ])[0].message,
    ).toBe("Item 'rs_1' of type 'reasoning' was provided without its required following item.");
  });

  it("R7 with stored outputs: the following item is the one that followed it in its response", () => {
    const storedOutputs = [[reasoning("rs_1"), call("fc_1", "c1"), call("fc_2", "c2")]];
    const input = [user("q"), reasoning("rs_1"), call("fc_2", "c2"), output("c2")];
    expect(rules(validateOpenAIResponsesInput(input, { storedOutputs }))).toEqual(["R7"]);
    expect(rules(validateOpenAIResponsesInput(input))).toEqual([]);
  });

  it("R6: an item that followed a reasoning item in its response is sent with it", () => {
    const storedOutputs = [[reasoning("rs_1"), call("fc_1", "c1")]];
    const violations = validateOpenAIResponsesInput([user("q"), call("fc_1", "c1"), output("c1")], { storedOutputs });
    expect(violations).toEqual([
      {
        rule: "R6",
        path: "input[1]",
        payloadIndex: 1,
        toolCallIds: ["fc_1", "rs_1"],
        message: "Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_1'.",
      },
    ]);
    // Without its id the item cannot be tied to the reasoning item.
    expect(
      validateOpenAIResponsesInput([user("q"), { ...call("fc_1", "c1"), id: undefined }, output("c1")], {
        storedOutputs,
      }),
    ).toEqual([]);
  });

  it("reads its options at the boundary", () => {
    expect(() => validateOpenAIResponsesInput([], { storedOutputs: "x" as never })).toThrow(ToolCallRepairInputError);
  });
});

describe("validateGeminiContents: G6", () => {
  const userText = (text: string) => ({ role: "user", parts: [{ text }] });
  const modelCall = (signature?: string) => ({
    role: "model",
    parts: [
      { functionCall: { name: "get_weather", args: {} }, ...(signature ? { thoughtSignature: signature } : {}) },
      { functionCall: { name: "f", args: {} } },
    ],
  });
  const responses = {
    role: "user",
    parts: [
      { functionResponse: { name: "get_weather", response: {} } },
      { functionResponse: { name: "f", response: {} } },
    ],
  };

  it("asks a signature of the first call of each step in the current turn only", () => {
    const unsignedNow = [userText("q"), modelCall(), responses];
    expect(rules(validateGeminiContents(unsignedNow, { thoughtSignatures: true }))).toEqual(["G6"]);
    expect(validateGeminiContents(unsignedNow, { thoughtSignatures: true })[0]).toMatchObject({
      path: "contents[1].parts[0]",
      payloadIndex: 1,
    });
    expect(rules(validateGeminiContents(unsignedNow))).toEqual([]);
    expect(
      rules(validateGeminiContents([userText("q"), modelCall("sig"), responses], { thoughtSignatures: true })),
    ).toEqual([]);
    // A step before the last user text belongs to an earlier turn.
    const earlier = [
      userText("q"),
      modelCall(),
      responses,
      { role: "model", parts: [{ text: "done" }] },
      userText("next"),
    ];
    expect(rules(validateGeminiContents(earlier, { thoughtSignatures: true }))).toEqual([]);
  });

  it("reads its options at the boundary", () => {
    expect(() => validateGeminiContents([], { thoughtSignatures: "yes" as never })).toThrow(ToolCallRepairInputError);
  });
});
