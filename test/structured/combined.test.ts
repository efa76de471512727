/**
 * Prompted structured output together with the tool-call repair surfaces and the checkpointer wrapper, in one
 * agent (issue 4: "Works together with the repair hook and the checkpointer wrapper in one agent").
 *
 * The incident's scenario: turn 1 the model calls two tools in parallel and the run is aborted while one of
 * them is still running (the other one has finished); turn 2 is a NEW user message in the same thread. The
 * real ChatBedrockConverse (AWS SDK included) talks to the local Converse stub, which enforces B1..B10,
 * prefill (B7) and role alternation (B6) included; MemorySaver and SqliteSaver on a temporary file.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { findToolCallProblems } from "../../src/engine";
import { promptedStructuredOutputMiddleware, toolCallRepairMiddleware } from "../../src/langchain";
import { toolCallRepairHook, withPromptedStructuredOutput, withToolCallRepair } from "../../src/langgraph";
import { isSyntheticResult } from "../../src/messages/inspect";
import { validateBedrockConverse } from "../support/validate";
import { bedrockShape } from "../integrations/fixtures";
import {
  firstCallIds,
  runAbortedMidTool,
  SAVER_KINDS,
  storedThread,
  threadConfig,
  ToolBench,
  type Agent,
  type SaverKind,
} from "../integrations/support/checkpoint-scenarios";
import { bedrockModel, startBedrockStub, type RunningStub, type ScriptedTurn } from "../support/stubs";

/** A Bedrock model without `tool_choice`: createAgent's tool strategy throws locally on it. */
const LLAMA = "meta.llama3-1-70b-instruct-v1:0";
const MISSING_RESULTS_ERROR = /Expected toolResult blocks at messages\.2\.content for the following Ids/;

const Findings = z.object({ answer: z.string(), sources: z.number() });
const FIRST = { answer: "alpha and beta", sources: 2 };
const SECOND = { answer: "gamma", sources: 1 };

/** Turn 1: `lookup` finishes, `slow_lookup` is held until the run is aborted; both in one assistant message. */
const PARALLEL_CALLS: ScriptedTurn = {
  toolCalls: [
    { name: "lookup", args: { q: "alpha" } },
    { name: "slow_lookup", args: { q: "beta" } },
  ],
};
const LOOKUP_RESULT = "lookup result for alpha";
const fenced = (value: unknown) => ({ text: `Here it is:\n\`\`\`json\n${JSON.stringify(value)}\n\`\`\`` });

const THREAD = "t";
const say = (text: string) => ({ messages: [new HumanMessage(text)] });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function stubWith(script: ScriptedTurn[]): Promise<RunningStub> {
  const stub = await startBedrockStub({ script });
  cleanups.push(() => stub.close());
  return stub;
}

function saverOf(kind: SaverKind): BaseCheckpointSaver {
  const created = kind.create();
  cleanups.push(created.dispose);
  return created.saver;
}

/** runAbortedMidTool only drives `graph.invoke`, which every compiled agent has. */
const abortable = (graph: { invoke(...args: never[]): Promise<unknown> }) =>
  ({ graph, netRepairs: 0 }) as unknown as Agent;

const resultsFor = (messages: BaseMessage[], id: string) =>
  messages.filter((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === id);

/** Problems left in a STORED thread (structural; request shaping is never stored); an open trailing exchange is allowed. */
const problemsIn = (messages: BaseMessage[]) =>
  findToolCallProblems(messages, { provider: "bedrock", level: "structural" }).filter(
    (p) => p.kind !== "trailing_open_exchange",
  );

/** Text of every toolResult of a Converse request, by toolUseId. */
function toolResultTexts(request: unknown): Map<string, string> {
  const texts = new Map<string, string>();
  for (const message of (
    request as { messages: { content: { toolResult?: { toolUseId: string; content: { text?: string }[] } }[] }[] }
  ).messages) {
    for (const block of message.content) {
      if (block.toolResult)
        texts.set(block.toolResult.toolUseId, block.toolResult.content.map((c) => c.text ?? "").join(""));
    }
  }
  return texts;
}

/** A placeholder's text as the engine writes it (the result did not come from the tool). */
const isSyntheticResultText = (text: string | undefined) =>
  text !== undefined && /has no result: .*its outcome is unknown/.test(text);

const lastRole = (request: unknown) => (request as { messages: { role: string }[] }).messages.at(-1)?.role;

/**
 * The thread after the abandoned exchange: valid for Bedrock, each call of turn 1 answered once, the aborted
 * one by a placeholder; the finished sibling by its real result when the tools ran as one task per call.
 */
function expectRepairedThread(messages: BaseMessage[], [lookupId, slowId]: string[], siblingKept: boolean) {
  expect(problemsIn(messages)).toEqual([]);
  expect(resultsFor(messages, lookupId)).toHaveLength(1);
  expect(resultsFor(messages, slowId)).toHaveLength(1);
  expect(isSyntheticResult(resultsFor(messages, slowId)[0])).toBe(true);
  const sibling = resultsFor(messages, lookupId)[0];
  expect(isSyntheticResult(sibling)).toBe(!siblingKept);
  if (siblingKept) expect(sibling.content).toBe(LOOKUP_RESULT);
}

describe.each(SAVER_KINDS)(
  "createReactAgent: prompted structured output + toolCallRepairHook + withToolCallRepair ($name)",
  (kind) => {
    async function setup(
      version: "v1" | "v2",
      options: { swap?: boolean; persist?: boolean; script?: ScriptedTurn[]; model?: string } = {},
    ) {
      const {
        swap = true,
        persist = false,
        script = [PARALLEL_CALLS, fenced(FIRST), fenced(SECOND)],
        model = LLAMA,
      } = options;
      const stub = await stubWith(script);
      const inner = saverOf(kind);
      const bench = new ToolBench();
      const params = {
        llm: bedrockModel(stub, { model }),
        tools: bench.all,
        responseFormat: Findings,
        version,
        preModelHook: toolCallRepairHook({ provider: "bedrock", persist }),
        checkpointer: withToolCallRepair(inner, { provider: "bedrock" }),
      };
      const agent = createReactAgent(swap ? withPromptedStructuredOutput(params) : params);
      const abortFirstTurn = async () => {
        // v2 runs one `Send` task per call: wait until the finished sibling's result is stored as a pending write.
        const aborted = await runAbortedMidTool(
          abortable(agent),
          bench,
          say("first"),
          THREAD,
          version === "v2" ? inner : undefined,
        );
        expect(aborted.message).toMatch(/abort/i);
        return firstCallIds(await storedThread(inner, THREAD));
      };
      return { stub, inner, agent, abortFirstTurn };
    }

    it.each(["v1", "v2"] as const)(
      "(%s) aborted mid-tool, then a new message: valid request, validated structuredResponse, repaired stored thread",
      async (version) => {
        const env = await setup(version);
        const callIds = await env.abortFirstTurn();
        expect(callIds).toHaveLength(2);

        const result = await env.agent.invoke(say("second"), threadConfig(THREAD));
        expect(env.stub.rejections).toEqual([]);
        // One model call in turn 2: the answer is the JSON itself, no structured-output call after it.
        expect(env.stub.calls).toBe(2);
        expect(result.structuredResponse).toEqual(FIRST);
        expectTypeOf(result.structuredResponse).toEqualTypeOf<{ answer: string; sources: number }>();
        // The hook closed both calls in the request and put an assistant turn before the new question (B6).
        const [lookupId, slowId] = callIds;
        expect(bedrockShape(env.stub.requests[1])).toEqual([
          "user(text)",
          `assistant(toolUse:${lookupId},toolUse:${slowId})`,
          `user(toolResult:${lookupId},toolResult:${slowId})`,
          "assistant(text)",
          "user(text)",
        ]);

        // createReactAgent v1 runs all calls of a message in ONE tools task: its writes are stored only when
        // every call is done, so the finished `lookup` died with the aborted task and nothing can be salvaged
        // (a placeholder is all there is). v2 runs one `Send` task per call: `lookup`'s result is a pending
        // write of the abandoned step, which LangGraph discards on new input and the wrapper puts back.
        const siblingKept = version === "v2";
        const state = (await env.agent.getState(threadConfig(THREAD))).values.messages as BaseMessage[];
        expectRepairedThread(state, callIds, siblingKept);
        expectRepairedThread(await storedThread(env.inner, THREAD), callIds, siblingKept);

        // Turn 2's own request: the run loaded its list before LangGraph dropped the pending writes, and the hook
        // reads them back from the run's checkpointer, so in v2 the model sees `lookup`'s real result in this very
        // turn. The aborted call's placeholder says its outcome is unknown (it had started), never that it did not run.
        const turn2 = toolResultTexts(env.stub.requests[1]);
        expect(turn2.get(lookupId) === LOOKUP_RESULT).toBe(siblingKept);
        expect(isSyntheticResultText(turn2.get(lookupId))).toBe(!siblingKept);
        expect(isSyntheticResultText(turn2.get(slowId))).toBe(true);
        const third = await env.agent.invoke(say("third"), threadConfig(THREAD));
        expect(env.stub.rejections).toEqual([]);
        expect(third.structuredResponse).toEqual(SECOND);
        expect(toolResultTexts(env.stub.requests[2]).get(lookupId) === LOOKUP_RESULT).toBe(siblingKept);
        expect(lastRole(env.stub.requests[2])).toBe("user");
      },
    );

    it("an invalid answer after the abort is corrected with a request that is valid too", async () => {
      const env = await setup("v2", {
        script: [PARALLEL_CALLS, { text: "alpha and beta, from two sources" }, fenced(FIRST)],
      });
      const callIds = await env.abortFirstTurn();
      const result = await env.agent.invoke(say("second"), threadConfig(THREAD));
      expect(env.stub.rejections).toEqual([]);
      expect(env.stub.calls).toBe(3);
      expect(result.structuredResponse).toEqual(FIRST);
      // The corrective call does not go through the preModelHook: it repairs its own request.
      expect(bedrockShape(env.stub.requests[2]).slice(0, 3)).toEqual(bedrockShape(env.stub.requests[1]).slice(0, 3));
      expect(lastRole(env.stub.requests[2])).toBe("user");
      expectRepairedThread(await storedThread(env.inner, THREAD), callIds, true);
    });

    it("native (Claude 4.6): the constrained call after the answer repairs its own request and ends on a user turn", async () => {
      const env = await setup("v2", {
        model: "us.anthropic.claude-sonnet-4-6-v1:0",
        script: [PARALLEL_CALLS, { text: "alpha and beta" }, { text: JSON.stringify(FIRST) }],
      });
      const callIds = await env.abortFirstTurn();
      const result = await env.agent.invoke(say("second"), threadConfig(THREAD));
      expect(env.stub.rejections).toEqual([]);
      expect(env.stub.calls).toBe(3);
      expect(result.structuredResponse).toEqual(FIRST);
      const structured = env.stub.requests[2] as { outputConfig?: unknown };
      expect(structured.outputConfig).toBeDefined();
      expect(lastRole(structured)).toBe("user");
      // The abandoned calls are closed in the structured request as in the agent's own (through the hook).
      expect(bedrockShape(env.stub.requests[2]).slice(0, 3)).toEqual(bedrockShape(env.stub.requests[1]).slice(0, 3));
      expectRepairedThread(await storedThread(env.inner, THREAD), callIds, true);
    });

    describe("without the swap (plain responseFormat), the same agent is rejected", () => {
      it(
        "request-only hook: createReactAgent's extra structured-output call sends state.messages, " +
          "unrepaired and ending on the answer",
        async () => {
          const env = await setup("v2", { swap: false });
          await env.abortFirstTurn();
          await expect(env.agent.invoke(say("second"), threadConfig(THREAD))).rejects.toThrow(MISSING_RESULTS_ERROR);
          // The agent's own call (through the hook) passed; the extra call after it did not. It reads `messages`,
          // not the hook's `llmInputMessages`, so the abandoned calls are still open in it (B1, reported first);
          // and it ends on the agent's final answer, a prefill (B7).
          expect(env.stub.calls).toBe(3);
          expect(env.stub.rejections.map((r) => r.rule)).toEqual(["B1"]);
          const rejected = env.stub.requests[2];
          expect(lastRole(rejected)).toBe("assistant");
          const violations = validateBedrockConverse(rejected, { noPrefill: true }).map((v) => v.rule);
          expect(violations).toContain("B7");
        },
      );

      it(
        "persisting hook (the thread itself repaired): what is left is Bedrock's request shaping, never " +
          "stored, and the prefill",
        async () => {
          const env = await setup("v2", { swap: false, persist: true });
          await env.abortFirstTurn();
          await expect(env.agent.invoke(say("second"), threadConfig(THREAD))).rejects.toThrow(
            /alternate between user and assistant/,
          );
          expect(env.stub.rejections.map((r) => r.rule)).toEqual(["B6"]);
          expect(
            validateBedrockConverse(env.stub.requests[2], { noPrefill: true })
              .map((v) => v.rule)
              .sort(),
          ).toEqual(["B6", "B7"]);
        },
      );

      it("the same persisting hook with the swap passes", async () => {
        const env = await setup("v2", { persist: true });
        const callIds = await env.abortFirstTurn();
        const result = await env.agent.invoke(say("second"), threadConfig(THREAD));
        expect(env.stub.rejections).toEqual([]);
        expect(result.structuredResponse).toEqual(FIRST);
        expectRepairedThread(await storedThread(env.inner, THREAD), callIds, true);
      });
    });
  },
);

type MiddlewareOrder = "repair first" | "structured first";
const ORDERS: MiddlewareOrder[] = ["repair first", "structured first"];

describe.each(SAVER_KINDS)(
  "createAgent: toolCallRepairMiddleware + promptedStructuredOutputMiddleware + withToolCallRepair ($name)",
  (kind) => {
    /**
     * Middleware order: the first middleware's wrapModelCall is the outer one. Either order works: "repair
     * first" hands the structured middleware an already repaired request, and its corrective call reuses those
     * messages; "structured first" calls the handler for the answer and for the correction, and each goes
     * through the repair middleware inside it. `beforeAgent` (repair on new input) runs before any model call
     * whatever the order. With `repairOnInput: false`, only the request-level repair (wrapModelCall) is left,
     * which is where the order could matter: both orders are run that way too.
     */
    async function setup(order: MiddlewareOrder, repairOnInput: boolean) {
      const stub = await stubWith([
        PARALLEL_CALLS,
        { text: "alpha and beta, from two sources" },
        fenced(FIRST),
        fenced(SECOND),
      ]);
      const inner = saverOf(kind);
      const bench = new ToolBench();
      const repair = toolCallRepairMiddleware({ provider: "bedrock", repairOnInput });
      const structured = promptedStructuredOutputMiddleware();
      const agent = createAgent({
        model: bedrockModel(stub, { model: LLAMA }),
        tools: bench.all,
        responseFormat: Findings,
        middleware: order === "repair first" ? [repair, structured] : [structured, repair],
        checkpointer: withToolCallRepair(inner, { provider: "bedrock" }),
      });
      return { stub, inner, bench, agent };
    }

    it("without promptedStructuredOutputMiddleware, the tool strategy throws locally on this model (no tool_choice)", async () => {
      const stub = await stubWith([PARALLEL_CALLS, fenced(FIRST)]);
      const bench = new ToolBench();
      const agent = createAgent({
        model: bedrockModel(stub, { model: LLAMA }),
        tools: bench.all,
        responseFormat: Findings,
        middleware: [toolCallRepairMiddleware({ provider: "bedrock" })],
        checkpointer: withToolCallRepair(saverOf(kind), { provider: "bedrock" }),
      });
      await expect(agent.invoke(say("first"), threadConfig(THREAD))).rejects.toThrow(
        /does not currently support 'tool_choice'/,
      );
      expect(stub.calls).toBe(0);
    });

    describe.each([true, false])("repairOnInput: %s", (repairOnInput) => {
      it.each(ORDERS)(
        "%s: aborted mid-tool, then a new message: valid requests, corrected and validated structuredResponse, repaired thread",
        async (order) => {
          const env = await setup(order, repairOnInput);
          // createAgent runs one `Send` task per call (its default tool version, v2).
          const aborted = await runAbortedMidTool(abortable(env.agent), env.bench, say("first"), THREAD, env.inner);
          expect(aborted.message).toMatch(/abort/i);
          const callIds = firstCallIds(await storedThread(env.inner, THREAD));
          const [lookupId, slowId] = callIds;

          const result = await env.agent.invoke(say("second"), threadConfig(THREAD));
          expect(env.stub.rejections).toEqual([]);
          // The answer, then one corrective call (the first answer held no JSON).
          expect(env.stub.calls).toBe(3);
          expect(result.structuredResponse).toEqual(FIRST);
          expectTypeOf(result.structuredResponse).toEqualTypeOf<{ answer: string; sources: number }>();
          for (const request of env.stub.requests.slice(1)) {
            expect(bedrockShape(request).slice(0, 5)).toEqual([
              "user(text)",
              `assistant(toolUse:${lookupId},toolUse:${slowId})`,
              `user(toolResult:${lookupId},toolResult:${slowId})`,
              "assistant(text)",
              "user(text)",
            ]);
            expect(lastRole(request)).toBe("user");
            expect((request as { toolConfig?: { toolChoice?: unknown } }).toolConfig?.toolChoice).toBeUndefined();
          }

          // The run's in-memory list lost `lookup`'s result with the discarded step, so whatever this run writes
          // has a placeholder for it (beforeAgent persists one; without it the calls are simply open); the wrapper
          // puts the salvaged real result back on every put of the run. getState reads through the wrapper.
          const state = (await env.agent.graph.getState(threadConfig(THREAD))).values.messages as BaseMessage[];
          expectRepairedThread(state, callIds, true);
          expectRepairedThread(await storedThread(env.inner, THREAD), callIds, true);

          const third = await env.agent.invoke(say("third"), threadConfig(THREAD));
          expect(env.stub.rejections).toEqual([]);
          expect(third.structuredResponse).toEqual(SECOND);
          expect(toolResultTexts(env.stub.requests[3]).get(lookupId)).toBe(LOOKUP_RESULT);
        },
      );
    });
  },
);
