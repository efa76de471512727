/**
 * The call-locations pass and call content blocks: each adapter understands a different set of call block formats
 * (read in their converters; see `callBlockFormats` in src/engine/profiles.ts). A block in a format the adapter
 * mis-sends leaves `content` at the request level; the call itself is in `tool_calls`, so nothing is lost.
 * - ChatOpenAI drops `tool_use` / `tool_call` parts but sends a Converse `{ toolUse }` block as a part without a
 *   type, and `input_json_delta` as a part of that type (O6: "Supported values are: 'text' and 'refusal'").
 * - ChatAnthropic skips `input_json_delta` while counting its id as sent, so the call is never sent (A1).
 * - ChatBedrockConverse throws on every format.
 */
import { describe, expect, it } from "vitest";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { findToolCallProblems, isCleanHistory, repairToolCalls } from "../../../src/engine";
import { ADAPTERS_PINNED, PAYLOAD_PROVIDERS, validatePayloadFor } from "../../support/payloads";

type Format = "tool_use" | "tool_call" | "input_json_delta" | "toolUse";
const FORMATS: Format[] = ["tool_use", "tool_call", "input_json_delta", "toolUse"];

function blockOf(format: Format): Record<string, unknown> {
  switch (format) {
    case "tool_use":
      return { type: "tool_use", id: "call_a", name: "search", input: {} };
    case "tool_call":
      return { type: "tool_call", id: "call_a", name: "search", args: {} };
    case "input_json_delta":
      return { type: "input_json_delta", id: "call_a", index: 0, input: "{}" };
    case "toolUse":
      return { toolUse: { toolUseId: "call_a", name: "search", input: {} } };
  }
}

/** A thread written through another provider: the call as a content block, in `tool_calls` too or only there. */
function history(format: Format, inToolCalls: boolean) {
  return [
    new HumanMessage("start"),
    new AIMessage({
      content: [{ type: "text", text: "looking" }, blockOf(format)] as never,
      tool_calls: inToolCalls ? [{ id: "call_a", name: "search", args: {}, type: "tool_call" }] : [],
    }),
    new ToolMessage({ content: "result", tool_call_id: "call_a" }),
    new HumanMessage("next"),
  ];
}

describe("call-locations: call blocks each adapter mis-sends leave content", () => {
  it("openai: a Converse toolUse block is stripped (ChatOpenAI would send it as a part without a type, O6)", async () => {
    const h = history("toolUse", true);
    expect((await validatePayloadFor("openai", h)).map((v) => v.rule)).toContain("O6");
    const { messages, repairs } = repairToolCalls(h, { provider: "openai" });
    expect(await validatePayloadFor("openai", messages)).toEqual([]);
    expect(messages[1].content).toEqual([{ type: "text", text: "looking" }]);
    expect((messages[1] as AIMessage).tool_calls?.map((c) => c.id)).toEqual(["call_a"]);
    expect(repairs).toEqual([
      expect.objectContaining({ problem: "call_block_in_content", action: "moved_call_block", index: 1 }),
    ]);
  });

  it("anthropic: an input_json_delta naming the call would hide it from the payload (A1); it is stripped", async () => {
    const h = history("input_json_delta", true);
    expect((await validatePayloadFor("anthropic", h)).length).toBeGreaterThan(0);
    const { messages } = repairToolCalls(h, { provider: "anthropic" });
    expect(await validatePayloadFor("anthropic", messages)).toEqual([]);
  });

  it("formats an adapter sends right or leaves out stay where they are (no repair)", () => {
    const kept: [Parameters<typeof repairToolCalls>[1] & object, Format][] = [
      [{ provider: "openai" }, "tool_use"],
      [{ provider: "openai" }, "tool_call"],
      [{ provider: "anthropic" }, "tool_use"],
      [{ provider: "anthropic" }, "toolUse"],
      ...FORMATS.map(
        (f) => [{ provider: "openai-responses" as const }, f] as [{ provider: "openai-responses" }, Format],
      ),
      ...FORMATS.map(
        (f) =>
          [{ provider: "bedrock" as const, level: "structural" as const }, f] as [
            { provider: "bedrock"; level: "structural" },
            Format,
          ],
      ),
    ];
    for (const [options, format] of kept) {
      const h = history(format, true);
      expect(isCleanHistory(h, options), `${JSON.stringify(options)} ${format}`).toBe(true);
      expect(repairToolCalls(h, options).messages, `${JSON.stringify(options)} ${format}`).toBe(h);
    }
  });

  it.skipIf(ADAPTERS_PINNED !== undefined)(
    "every format, every adapter (and strict, which strips them all): the repaired payload is valid",
    async () => {
      for (const provider of [...PAYLOAD_PROVIDERS, "strict"] as const)
        for (const format of FORMATS)
          for (const inToolCalls of [true, false]) {
            const label = `${provider} ${format} ${inToolCalls ? "also in tool_calls" : "only in content"}`;
            const { messages } = repairToolCalls(history(format, inToolCalls), { provider });
            expect(await validatePayloadFor(provider, messages), label).toEqual([]);
            expect(findToolCallProblems(messages, { provider }), label).toEqual([]);
            expect(
              (messages[1] as AIMessage).tool_calls?.map((c) => c.id),
              label,
            ).toEqual(["call_a"]);
          }
    },
  );

  it("gemini strips every format (ChatGoogleGenerativeAI sends tool_use / tool_call as a second functionCall, G3)", () => {
    for (const format of FORMATS) {
      const { messages } = repairToolCalls(history(format, true), { provider: "gemini" });
      expect(messages[1].content, format).toEqual([{ type: "text", text: "looking" }]);
    }
  });
});
