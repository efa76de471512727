/**
 * A Gemini 3+ thread through a real agent: createAgent + toolCallRepair() with ChatGoogleGenerativeAI against the
 * Gemini stub (G1-G6). A run aborted while one of two parallel calls runs, then a new message: the model's request
 * holds the finished call's real result, each call in its own step with a signature, and none of that request
 * shaping (the split steps, Google's placeholder signature) is ever stored.
 */
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { PLACEHOLDER_THOUGHT_SIGNATURE, GEMINI_SIGNATURES_KEY } from "../../src/messages/responses";
import { toolCallRepair } from "../../src/integrations/middleware";
import { geminiModel, startGeminiStub, type RunningStub } from "../support/stubs";
import { storedThread, threadConfig, ToolBench, until } from "./support/checkpoint-scenarios";

type Dict = Record<string, unknown>;
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The function responses a Gemini request carries, by function name. */
function sentResponses(request: unknown): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const content of ((request as Dict).contents as Dict[]) ?? []) {
    for (const part of (content.parts as Dict[]) ?? []) {
      const response = part.functionResponse as Dict | undefined;
      if (response) out.set(String(response.name), response.response);
    }
  }
  return out;
}

describe.each([{ wrap: true }, { wrap: false }])(
  "createAgent + ChatGoogleGenerativeAI (wrapper: $wrap)",
  ({ wrap }) => {
    it("after an abort and a new message, the request holds the finished result; nothing of the request's shaping is stored", async () => {
      const stub: RunningStub = await startGeminiStub({
        script: (request) => {
          const last = ((request as Dict).contents as Dict[]).at(-1)!;
          const asksAnew =
            last.role === "user" && ((last.parts as Dict[]) ?? []).some((part) => typeof part.text === "string");
          if (!asksAnew) return { text: "done" };
          return {
            toolCalls: [
              { name: "lookup", args: { q: "a" } },
              { name: "slow_lookup", args: { q: "b" } },
            ],
          };
        },
      });
      cleanups.push(() => stub.close());
      const bench = new ToolBench();
      const inner = new MemorySaver();
      const setup = toolCallRepair();
      // A Gemini 3+ id the adapter adds no placeholder signature for: the repair's own request shaping is what is sent.
      const model = geminiModel(stub, { model: "gemini-4-pro" });
      const checkpointer = wrap ? setup.checkpointer(inner) : inner;
      const agent = createAgent({ model, tools: bench.all, middleware: [setup.middleware], checkpointer });

      const controller = new AbortController();
      bench.holdSlow = true;
      const slowStarted = bench.nextSlowStart();
      const input = { messages: [new HumanMessage("both")] };
      const first = agent.invoke(input, { ...threadConfig("g"), signal: controller.signal }).catch(() => undefined);
      await slowStarted;
      const pending = async () => (await inner.getTuple(threadConfig("g")))?.pendingWrites ?? [];
      await until(async () => (await pending()).some(([, channel]) => channel === "messages"), "the lookup's write");
      controller.abort();
      await first;
      bench.holdSlow = false;

      await agent.invoke({ messages: [new HumanMessage("just the first")] }, threadConfig("g"));
      await agent.invoke({ messages: [new HumanMessage("thanks")] }, threadConfig("g"));
      expect(stub.rejections).toEqual([]);
      const sent = sentResponses(stub.requests[1]);
      expect(sent.get("lookup")).toEqual({ result: "lookup result for a" });
      expect(JSON.stringify(sent.get("slow_lookup"))).toMatch(/its outcome is unknown/);

      const stored: BaseMessage[] = await storedThread(inner, "g");
      const callers = stored.filter((m): m is AIMessage => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0);
      // Each model message keeps both its calls (the split is the request's) and only the signature the model gave.
      expect(callers.map((m) => m.tool_calls!.length)).toEqual([2, 2, 2]);
      for (const m of callers) {
        const signatures = Object.values((m.additional_kwargs[GEMINI_SIGNATURES_KEY] ?? {}) as Dict);
        expect(signatures).toHaveLength(1);
        expect(signatures).not.toContain(PLACEHOLDER_THOUGHT_SIGNATURE);
      }
    });
  },
);
