/**
 * Pass "blocks": assistant content blocks a provider's adapter cannot send. Through the real
 * ChatBedrockConverse payload builder (it throws `Unsupported content block type: ...` before any request).
 */
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatGoogleGenerativeAI } from "@langchain/google-genai";
import { describe, expect, it } from "vitest";
import { findToolCallProblems, isCleanHistory, repairToolCalls } from "../../../src/engine";
import type { Provider } from "../../../src/types";
import { ADAPTERS_PINNED, payloadFor } from "../../support/payloads";

const withBlocks = (...blocks: unknown[]): BaseMessage[] => [
  new HumanMessage({ content: "question", id: "h1" }),
  new AIMessage({ content: blocks as never, id: "a1" }),
  new HumanMessage({ content: "and then?", id: "h2" }),
];

/** The clean walk and the finders agree, and a repaired history is clean and stays as it is. */
function repairedFor(h: BaseMessage[], provider: Provider) {
  expect(isCleanHistory(h, { provider })).toBe(findToolCallProblems(h, { provider }).length === 0);
  const result = repairToolCalls(h, { provider });
  expect(isCleanHistory(result.messages, { provider })).toBe(true);
  expect(repairToolCalls(result.messages, { provider }).messages).toBe(result.messages);
  return result;
}

const UNREADABLE: [string, unknown][] = [
  ["a block of a type no adapter knows", { type: "mystery", payload: { n: 1 } }],
  ["a block without a type", { foo: 1 }],
  [
    "an image_url block in an assistant message",
    { type: "image_url", image_url: { url: "https://example.invalid/x.png" } },
  ],
  ["a custom block that carries text", { type: "output_text", text: "The flight leaves at 08:05." }],
];

describe.skipIf(ADAPTERS_PINNED !== undefined)(
  `blocks: what ChatBedrockConverse cannot read${ADAPTERS_PINNED ? ` (skipped: ${ADAPTERS_PINNED})` : ""}`,
  () => {
    for (const [name, block] of UNREADABLE)
      it(`${name}: the adapter throws before the repair; after it, the request is built and the block's content is text`, async () => {
        const h = withBlocks({ type: "text", text: "Let me check." }, block);
        await expect(payloadFor("bedrock", h)).rejects.toThrow(/Unsupported content block type/);

        const { messages, repairs } = repairedFor(h, "bedrock");
        expect(repairs).toEqual([
          expect.objectContaining({ problem: "unsupported_block", action: "converted_block", index: 1 }),
        ]);
        const content = messages[1].content as { type: string; text: string }[];
        expect(content[0]).toEqual({ type: "text", text: "Let me check." });
        expect(content[1].type).toBe("text");
        const text = (block as { text?: string }).text;
        if (text) expect(content[1].text).toBe(text);
        else expect(content[1].text).toContain(JSON.stringify(block).slice(1, 12));
        await expect(payloadFor("bedrock", messages)).resolves.toBeDefined();
        // Untouched messages keep their identity; the input is not changed.
        expect(messages[0]).toBe(h[0]);
        expect(messages[2]).toBe(h[2]);
        expect((h[1].content as unknown[])[1]).toBe(block);
      });

    it("blocks the adapter reads stay as they are: text, reasoning, a cache point", async () => {
      const h = withBlocks(
        { type: "text", text: "Answer." },
        { type: "reasoning_content", reasoningText: { text: "thought", signature: "sig" } },
        { cachePoint: { type: "default" } },
      );
      await expect(payloadFor("bedrock", h)).resolves.toBeDefined();
      expect(repairedFor(h, "bedrock").messages).toBe(h);
    });

    it("other providers and storage leave such blocks alone", () => {
      const h = withBlocks({ type: "mystery" }, { type: "text", text: "Answer." });
      for (const provider of ["openai", "anthropic"] as const) expect(repairedFor(h, provider).messages).toBe(h);
      expect(repairToolCalls(h, { provider: "bedrock", level: "structural" }).messages).toBe(h);
    });

    it("the strict profile (valid for every provider at once) converts them too", () => {
      const { repairs } = repairedFor(withBlocks({ type: "mystery" }, { type: "text", text: "Answer." }), "strict");
      expect(repairs.map((r) => r.action)).toContain("converted_block");
    });
  },
);

describe("blocks: what ChatGoogleGenerativeAI cannot read", () => {
  const gemini = new ChatGoogleGenerativeAI({ model: "gemini-3-pro", apiKey: "test-key" });
  const contentsFor = (messages: BaseMessage[]) =>
    (
      gemini as unknown as { _buildGenerateContentRequest(m: BaseMessage[], o: object): { contents: unknown[] } }
    )._buildGenerateContentRequest(messages, {}).contents;

  it("a Bedrock reasoning block (a thread continued from Claude on Bedrock): sent as text after the repair, never its signature", () => {
    const h = withBlocks(
      { type: "reasoning", reasoning: "The user wants the 08:05 flight.", signature: "sig_bedrock" },
      { type: "text", text: "Booked." },
    );
    expect(() => contentsFor(h)).toThrow(/Unknown content type reasoning/);

    const { messages, repairs } = repairedFor(h, "gemini");
    expect(repairs).toEqual([
      expect.objectContaining({ problem: "unsupported_block", action: "converted_block", index: 1 }),
    ]);
    const sent = JSON.stringify(contentsFor(messages));
    expect(sent).toContain("The user wants the 08:05 flight.");
    expect(sent).toContain("Booked.");
    expect(sent).not.toContain("sig_bedrock");
  });

  it("a block of a type the adapter does not know becomes text; what it reads stays as it is", () => {
    const h = withBlocks(
      { type: "mystery", payload: { n: 1 } },
      { type: "executableCode", executableCode: { language: "PYTHON", code: "print(1)" } },
    );
    expect(() => contentsFor(h)).toThrow(/Unknown content type mystery/);
    const { messages } = repairedFor(h, "gemini");
    const blocks = messages[1].content as { type: string }[];
    expect(blocks.map((b) => b.type)).toEqual(["text", "executableCode"]);
    expect(() => contentsFor(messages)).not.toThrow();
  });
});
