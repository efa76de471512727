/**
 * The chat-messages pass: a ChatMessage (LangChain's `generic` message with a free `role`) is sent by each adapter
 * its own way (ChatBedrockConverse: every one as a user turn; ChatAnthropic: throws; ChatOpenAI: the role as it
 * is, so `tool` goes without a call id and `human` / `ai` are refused). At the request level it becomes the typed
 * message its role means; storage keeps it. Checked on the payloads the real adapters build.
 */
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { findToolCallProblems, isCleanHistory, repairToolCalls } from "../../../src/engine";
import { repairMarkerOf } from "../../../src/messages/inspect";
import type { Provider } from "../../../src/types";
import { aiWithCalls, toolResult } from "../../support/builders";
import { PAYLOAD_PROVIDERS, validatePayloadFor } from "../../support/payloads";
import { CHAT_ROLES } from "../../support/histories";

const around = (chat: BaseMessage) => [
  new HumanMessage({ content: "start", id: "h1" }),
  chat,
  new HumanMessage({ content: "next", id: "h2" }),
];
const chat = (role: string, content = `said as ${role}`) => new ChatMessage({ role, content, id: "chat1" });
const textOf = (m: BaseMessage) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

/** ChatOpenAI warns on roles it cannot map; the unrepaired payloads below make it do so on purpose. */
function quietWarnings(): void {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  onTestFinished(() => warn.mockRestore());
}

describe("chat-messages: a ChatMessage as the adapters really send it", () => {
  it("bedrock: an assistant ChatMessage between two user messages is sent as a user turn (B6) unless typed", async () => {
    const h = around(chat("assistant", "an answer"));
    expect((await validatePayloadFor("bedrock", h)).map((v) => v.rule)).toContain("B6");
    const { messages, repairs } = repairToolCalls(h, { provider: "bedrock" });
    expect(await validatePayloadFor("bedrock", messages)).toEqual([]);
    expect(AIMessage.isInstance(messages[1])).toBe(true);
    expect(messages[1].id).toBe("chat1");
    expect(messages[1].content).toBe("an answer");
    expect(repairs).toContainEqual(
      expect.objectContaining({ problem: "chat_message_role", action: "converted_message", index: 1 }),
    );
  });

  it("anthropic: ChatAnthropic throws on any ChatMessage; after repair none is left", async () => {
    const h = around(chat("assistant", "an answer"));
    expect((await validatePayloadFor("anthropic", h))[0]).toMatchObject({
      rule: "LOCAL",
      message: expect.stringContaining('"generic" is not supported'),
    });
    const { messages } = repairToolCalls(h, { provider: "anthropic" });
    expect(await validatePayloadFor("anthropic", messages)).toEqual([]);
    expect(messages.some((m) => m.type === "generic")).toBe(false);
  });

  it("openai: a ChatMessage with role 'tool' is a result without a call (O2); it becomes user text that keeps its content", async () => {
    const h = around(chat("tool", "a stray tool output"));
    expect((await validatePayloadFor("openai", h)).map((v) => v.rule)).toContain("O2");
    const { messages, repairs } = repairToolCalls(h, { provider: "openai" });
    expect(await validatePayloadFor("openai", messages)).toEqual([]);
    expect(HumanMessage.isInstance(messages[1])).toBe(true);
    expect(textOf(messages[1])).toContain("a stray tool output");
    expect(messages[1].id).toBe("chat1");
    expect(repairMarkerOf(messages[1])).toMatchObject({ synthetic: false, reason: "orphan_result" });
    expect(repairs).toHaveLength(1);
  });

  it("an unknown role becomes user text that names the role", () => {
    const { messages } = repairToolCalls(around(chat("critic", "too long")), { provider: "anthropic" });
    expect(HumanMessage.isInstance(messages[1])).toBe(true);
    expect(textOf(messages[1])).toBe('[Message with role "critic"]\ntoo long');
    expect(repairMarkerOf(messages[1])).toMatchObject({ synthetic: false, reason: "chat_message_role" });
  });

  it(
    "a system ChatMessage becomes a SystemMessage (lifted into `system` by Bedrock, placed or turned " +
      "into user text by the other passes)",
    () => {
      const bedrock = repairToolCalls(around(chat("system", "be brief")), { provider: "bedrock" }).messages;
      expect(SystemMessage.isInstance(bedrock[1])).toBe(true);
      expect(bedrock[1].content).toBe("be brief");
      const strict = repairToolCalls(around(chat("developer", "be brief")), { provider: "strict" }).messages;
      expect(strict.some((m) => m.type === "generic" || SystemMessage.isInstance(m))).toBe(false);
      expect(strict.map(textOf).join("\n")).toContain("be brief");
    },
  );

  it("a ChatMessage between a call and its results is judged by the turn it becomes (moved after the results)", async () => {
    const h = [
      new HumanMessage("q"),
      aiWithCalls("a"),
      chat("tool", "stray"),
      toolResult("a"),
      new HumanMessage("next"),
    ];
    for (const provider of [...PAYLOAD_PROVIDERS, "strict"] as const) {
      const { messages } = repairToolCalls(h, { provider });
      expect(await validatePayloadFor(provider, messages), provider).toEqual([]);
    }
  });

  it("every role, every adapter: the typed request is valid and keeps the words", async () => {
    quietWarnings();
    for (const provider of [...PAYLOAD_PROVIDERS, "strict"] as const)
      for (const role of CHAT_ROLES) {
        const { messages } = repairToolCalls(around(chat(role)), { provider });
        expect(await validatePayloadFor(provider, messages), `${provider} ${role}`).toEqual([]);
        expect(findToolCallProblems(messages, { provider }), `${provider} ${role}`).toEqual([]);
        expect(messages.map(textOf).join("\n"), `${provider} ${role}`).toContain(`said as ${role}`);
      }
  });

  it("roles an adapter sends right stay ChatMessages (no repair): OpenAI's own roles, user turns on Bedrock, human/ai on Gemini", () => {
    const kept: [Provider, string][] = [
      ["openai", "user"],
      ["openai", "assistant"],
      ["openai", "system"],
      ["openai", "developer"],
      ["openai-responses", "user"],
      ["openai-responses", "assistant"],
      ["bedrock", "user"],
      ["bedrock", "human"],
      ["gemini", "human"],
      ["gemini", "ai"],
    ];
    // Each where its turn fits: a user turn after an answer, anything else between two user turns.
    const fitting = (role: string) =>
      role === "user" || role === "human"
        ? [new HumanMessage("q"), new AIMessage("an answer"), chat(role)]
        : around(chat(role));
    for (const [provider, role] of kept) {
      const h = fitting(role);
      expect(isCleanHistory(h, { provider }), `${provider} ${role}`).toBe(true);
      expect(repairToolCalls(h, { provider }).messages, `${provider} ${role}`).toBe(h);
    }
    for (const [provider, role] of [
      ["openai", "human"],
      ["gemini", "user"],
      ["bedrock", "assistant"],
      ["anthropic", "user"],
      ["strict", "user"],
    ] as const) {
      expect(isCleanHistory(fitting(role), { provider }), `${provider} ${role}`).toBe(false);
      expect(
        findToolCallProblems(fitting(role), { provider }).map((p) => p.kind),
        `${provider} ${role}`,
      ).toEqual(["chat_message_role"]);
    }
  });

  it("storage keeps the user's ChatMessage: nothing to do at the structural level", () => {
    for (const role of CHAT_ROLES) {
      const h = around(chat(role));
      expect(findToolCallProblems(h, { provider: "anthropic", level: "structural" }), role).toEqual([]);
      expect(repairToolCalls(h, { provider: "anthropic", level: "structural" }).messages, role).toBe(h);
    }
  });

  it("an assistant ChatMessage carrying raw OpenAI calls keeps them: promoted, then answered", async () => {
    const raw = { id: "call_r", type: "function", function: { name: "search", arguments: '{"q":"x"}' } };
    const h = around(
      new ChatMessage({
        role: "assistant",
        content: "",
        id: "chat1",
        additional_kwargs: { tool_calls: [raw] as never },
      }),
    );
    const { messages } = repairToolCalls(h, { provider: "anthropic" });
    expect((messages[1] as AIMessage).tool_calls).toEqual([
      { id: "call_r", name: "search", args: { q: "x" }, type: "tool_call" },
    ]);
    expect(await validatePayloadFor("anthropic", messages)).toEqual([]);
  });
});
