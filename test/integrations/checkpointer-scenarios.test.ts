/**
 * End-to-end: the checkpointer wrapper in a real tool loop, with MemorySaver, SqliteSaver on a file and
 * PostgresSaver (skipped with the reason when PostgreSQL is unreachable), the model being the real
 * ChatBedrockConverse / ChatOpenAI client against the strict local stub.
 *
 * The run that abandons an exchange was loaded before LangGraph knew its input was new, so its own model call
 * sees the stale list: these graphs repair each request without persisting it (what a `wrapModelCall`
 * middleware does; `requestNet`). The wrapper makes the STORED thread valid and keeps real results.
 */
import { Command } from "@langchain/langgraph";
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, it } from "vitest";
import { withToolCallRepair } from "../../src/integrations/checkpointer";
import { isSyntheticResult, repairMarkerOf } from "../../src/messages/inspect";
import type { ToolCallRepair } from "../../src/types";
import {
  buildAgent,
  firstCallIds,
  PROVIDER_NAMES,
  problemsOf,
  runAbortedMidTool,
  SERVER_SAVER_KINDS,
  seededRandom,
  startStubbedModel,
  storedThread,
  syntheticResults,
  threadConfig,
  ToolBench,
  toolResults,
  type ProviderName,
  type ServerSaverKind,
  type StubbedModel,
  type ToolsMode,
} from "./support/checkpoint-scenarios";

const LOOKUP_AND_SLOW = [
  { name: "lookup", args: { q: "alpha" } },
  { name: "slow_lookup", args: { q: "beta" } },
];
const LOOKUP_AND_ASK = [
  { name: "lookup", args: { q: "alpha" } },
  { name: "ask_human", args: { q: "may I?" } },
];
const MODES: ToolsMode[] = ["single", "send"];
const PROVIDER_ERROR: Record<ProviderName, RegExp> = {
  bedrock: /Expected toolResult blocks at messages\.\d+\.content for the following Ids/,
  openai: /An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'/,
};

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  model: StubbedModel;
  bench: ToolBench;
  inner: BaseCheckpointSaver;
  repairs: ToolCallRepair[];
  agent: ReturnType<typeof buildAgent>;
  reopen?: () => BaseCheckpointSaver;
}

async function setup(
  provider: ProviderName,
  kind: ServerSaverKind,
  mode: ToolsMode,
  options: { wrap?: boolean; requestNet?: boolean; calls?: typeof LOOKUP_AND_SLOW } = {},
): Promise<Setup> {
  const { wrap = true, requestNet = true, calls = LOOKUP_AND_SLOW } = options;
  const model = await startStubbedModel(provider, calls);
  const saverOf = await kind.create();
  cleanups.push(() => model.stub.close(), saverOf.dispose);
  const bench = new ToolBench();
  const repairs: ToolCallRepair[] = [];
  const checkpointer = wrap
    ? withToolCallRepair(saverOf.saver, { provider: model.provider, onRepair: (r) => repairs.push(r) })
    : saverOf.saver;
  const agent = buildAgent({ model, bench, checkpointer, mode, requestNet });
  return { model, bench, inner: saverOf.saver, repairs, agent, reopen: saverOf.reopen };
}

const interruptsOf = (state: unknown) => (state as { __interrupt__?: unknown[] }).__interrupt__;
const say = (text: string) => ({ messages: [new HumanMessage(text)] });
const resultFor = (messages: BaseMessage[], id: string) => toolResults(messages).filter((m) => m.tool_call_id === id);

/** After an abandoned exchange: valid, one result per call, the finished sibling's real result kept (Send). */
function expectRepairedThread(
  stored: BaseMessage[],
  callIds: string[],
  mode: ToolsMode,
  provider: StubbedModel["provider"],
) {
  expect(problemsOf(stored, provider)).toEqual([]);
  // Storage gets structural fixes only: every user message stays as it was sent, with its own id, unmerged.
  const humans = stored.filter((m) => HumanMessage.isInstance(m));
  expect(new Set(humans.map((m) => m.id)).size).toBe(humans.length);
  for (const m of humans) expect(String(m.content)).not.toContain("\n\n");
  expect(stored.filter((m) => repairMarkerOf(m) !== undefined && !ToolMessage.isInstance(m))).toEqual([]);
  const [lookupId, slowId] = callIds;
  expect(resultFor(stored, lookupId)).toHaveLength(1);
  expect(resultFor(stored, slowId)).toHaveLength(1);
  expect(isSyntheticResult(resultFor(stored, slowId)[0])).toBe(true);
  if (mode === "send") {
    // Finished before the abort, stored only as a pending write that LangGraph drops on new input.
    expect(resultFor(stored, lookupId)[0]).toMatchObject({ content: "lookup result for alpha" });
    expect(isSyntheticResult(resultFor(stored, lookupId)[0])).toBe(false);
  } else {
    // One tools task: the finished call's result died with the task; nothing to salvage.
    expect(isSyntheticResult(resultFor(stored, lookupId)[0])).toBe(true);
  }
}

describe.each(PROVIDER_NAMES)("checkpointer scenarios with %s", (provider) => {
  describe.each(SERVER_SAVER_KINDS)("$name", (kind) => {
    if (kind.skip) {
      it.skip(`(skipped: ${kind.skip})`, () => {});
      return;
    }
    it.each(MODES)(
      "(1) %s tools: aborted mid-tool, then a new message: the model call succeeds and the stored thread is valid",
      async (mode) => {
        const env = await setup(provider, kind, mode);
        const aborted = await runAbortedMidTool(
          env.agent,
          env.bench,
          say("first"),
          "t",
          mode === "send" ? env.inner : undefined,
        );
        expect(aborted.message).toMatch(/abort/i);
        const callIds = firstCallIds(await storedThread(env.inner, "t"));

        const result = await env.agent.graph.invoke(say("second"), threadConfig("t"));
        expect(env.model.stub.rejections).toEqual([]);
        expect(result.messages.at(-1)?.content).toMatch(/^answer/);
        expectRepairedThread(await storedThread(env.inner, "t"), callIds, mode, env.model.provider);
        expect(env.repairs.filter((r) => r.toolCallId === callIds[1]).map((r) => r.action)).toEqual([
          "synthesized_result",
        ]);
      },
    );

    it.each(MODES)(
      "(2) %s tools: aborted mid-tool, then invoke(null): each pending call runs once, no placeholder, no duplicate",
      async (mode) => {
        const env = await setup(provider, kind, mode);
        await runAbortedMidTool(env.agent, env.bench, say("first"), "t", mode === "send" ? env.inner : undefined);
        const callIds = firstCallIds(await storedThread(env.inner, "t"));
        const before = env.bench.completions(callIds);

        await env.agent.graph.invoke(null, threadConfig("t"));
        const ranOnResume = env.bench.completions(callIds).map((n, i) => n - before[i]);
        // Send: the finished sibling's write is re-applied, only the aborted call runs. One task: both run.
        expect(ranOnResume).toEqual(mode === "send" ? [0, 1] : [1, 1]);
        const stored = await storedThread(env.inner, "t");
        expect(syntheticResults(stored)).toEqual([]);
        expect(callIds.map((id) => resultFor(stored, id).length)).toEqual([1, 1]);
        expect(problemsOf(stored, env.model.provider)).toEqual([]);
        expect(env.repairs).toEqual([]);
        expect(env.agent.netRepairs).toBe(0);
        expect(env.model.stub.rejections).toEqual([]);
      },
    );

    it.each(MODES)(
      "(3) %s tools: an interrupt resumed with Command({ resume }) runs exactly as without the wrapper",
      async (mode) => {
        const outcome = async (wrap: boolean) => {
          const env = await setup(provider, kind, mode, { wrap, requestNet: false, calls: LOOKUP_AND_ASK });
          const paused = await env.agent.graph.invoke(say("first"), threadConfig("t"));
          expect(interruptsOf(paused)).toHaveLength(1);
          await env.agent.graph.invoke(new Command({ resume: "yes" }), threadConfig("t"));
          const stored = await storedThread(env.inner, "t");
          return {
            repairs: env.repairs,
            rejections: env.model.stub.rejections,
            thread: stored.map((m) => [
              m.getType(),
              typeof m.content === "string" ? m.content.replace(/^answer \d+$/, "answer") : m.content,
            ]),
          };
        };
        const wrapped = await outcome(true);
        expect(wrapped).toEqual(await outcome(false));
        expect(wrapped.repairs).toEqual([]);
        expect(wrapped.rejections).toEqual([]);
        expect(wrapped.thread).toContainEqual(["tool", "the human said yes"]);
      },
    );

    it.each(MODES)("(3) %s tools: an interrupt answered with a new message instead: valid", async (mode) => {
      const env = await setup(provider, kind, mode, { calls: LOOKUP_AND_ASK });
      await env.agent.graph.invoke(say("first"), threadConfig("t"));
      const [lookupId, askId] = firstCallIds(await storedThread(env.inner, "t"));

      // The model call succeeds; its new calls ask the human again, so the run pauses once more.
      const paused = await env.agent.graph.invoke(say("never mind, something else"), threadConfig("t"));
      expect(env.model.stub.rejections).toEqual([]);
      expect(interruptsOf(paused)).toHaveLength(1);
      const result = await env.agent.graph.invoke(new Command({ resume: "yes" }), threadConfig("t"));
      expect(result.messages.at(-1)?.content).toMatch(/^answer/);
      expect(env.model.stub.rejections).toEqual([]);
      const stored = await storedThread(env.inner, "t");
      expect(problemsOf(stored, env.model.provider)).toEqual([]);
      expect(isSyntheticResult(resultFor(stored, askId)[0])).toBe(true);
      // With per-call tasks, the lookup that finished before the interrupt keeps its real result.
      expect(isSyntheticResult(resultFor(stored, lookupId)[0])).toBe(mode === "single");
    });

    it.runIf(kind.name !== "MemorySaver").each(MODES)(
      "(4) %s tools: after a process restart (a new saver on the same storage) the outcomes are the same",
      async (mode) => {
        const env = await setup(provider, kind, mode);
        await runAbortedMidTool(
          env.agent,
          env.bench,
          say("first"),
          "new-message",
          mode === "send" ? env.inner : undefined,
        );
        await runAbortedMidTool(env.agent, env.bench, say("first"), "resume", mode === "send" ? env.inner : undefined);
        const newMessageIds = firstCallIds(await storedThread(env.inner, "new-message"));
        const resumeIds = firstCallIds(await storedThread(env.inner, "resume"));

        const reopened = env.reopen!();
        const repairs: ToolCallRepair[] = [];
        const bench = env.bench;
        const restarted = buildAgent({
          model: env.model,
          bench,
          mode,
          requestNet: true,
          checkpointer: withToolCallRepair(reopened, {
            provider: env.model.provider,
            onRepair: (r) => repairs.push(r),
          }),
        });
        await restarted.graph.invoke(say("second"), threadConfig("new-message"));
        expectRepairedThread(await storedThread(reopened, "new-message"), newMessageIds, mode, env.model.provider);

        const before = bench.completions(resumeIds);
        await restarted.graph.invoke(null, threadConfig("resume"));
        expect(bench.completions(resumeIds).map((n, i) => n - before[i])).toEqual(mode === "send" ? [0, 1] : [1, 1]);
        const resumed = await storedThread(reopened, "resume");
        expect(syntheticResults(resumed)).toEqual([]);
        expect(problemsOf(resumed, env.model.provider)).toEqual([]);
        expect(env.model.stub.rejections).toEqual([]);
        expect(repairs.every((r) => newMessageIds.includes(r.toolCallId ?? newMessageIds[0]))).toBe(true);
      },
    );

    it("(5) a 10-turn conversation with aborts at random turns: no rejection, no repair repeated on a repaired thread", async () => {
      const env = await setup(provider, kind, "send");
      const random = seededRandom(20240611);
      const aborts = Array.from({ length: 10 }, () => random() < 0.4);
      expect(aborts.filter(Boolean).length).toBeGreaterThanOrEqual(2);
      expect(aborts.filter(Boolean).length).toBeLessThan(10);

      const perTurn: { wrapper: number; net: number }[] = [];
      for (const [turn, abort] of aborts.entries()) {
        const [repairsBefore, netBefore] = [env.repairs.length, env.agent.netRepairs];
        if (abort) await runAbortedMidTool(env.agent, env.bench, say(`turn ${turn}`), "t", env.inner);
        else await env.agent.graph.invoke(say(`turn ${turn}`), threadConfig("t"));
        // An aborted invoke() rejects before the run's last writes land; a read of PostgresSaver waits for them.
        await env.inner.getTuple(threadConfig("t"));
        perTurn.push({ wrapper: env.repairs.length - repairsBefore, net: env.agent.netRepairs - netBefore });
      }

      expect(env.model.stub.rejections).toEqual([]);
      perTurn.forEach(({ wrapper, net }, turn) => {
        const afterAbort = turn > 0 && aborts[turn - 1];
        // Only the run that abandons an exchange has anything to repair in storage; once repaired, nothing comes
        // back. Requests are another matter on Bedrock: the stored thread keeps the placeholder result followed
        // by the user's next message (two user turns, B6), which every later request shapes again, never stored.
        // With PostgreSQL the wrapper's report sometimes lands after the aborted turn was counted (its writes
        // outlive the rejected invoke(), see "(R)" in checkpointer-known-failures): there, only the totals below.
        const shapedEachTurn = provider === "bedrock" && aborts.slice(0, Math.max(0, turn - 1)).some(Boolean);
        if (kind.name === "PostgresSaver")
          expect({ turn, net: net > 0 }).toEqual({ turn, net: afterAbort || shapedEachTurn });
        else
          expect({ turn, repaired: wrapper > 0, net: net > 0 }).toEqual({
            turn,
            repaired: afterAbort,
            net: afterAbort || shapedEachTurn,
          });
      });
      const repairedIds = env.repairs.map((r) => `${r.action}:${r.toolCallId ?? ""}`).filter((k) => !k.endsWith(":"));
      expect(new Set(repairedIds).size).toBe(repairedIds.length);

      const stored = await storedThread(env.inner, "t");
      const lastAborted = aborts[aborts.length - 1];
      expect(
        problemsOf(stored, env.model.provider).filter((p) => !lastAborted || p.kind !== "trailing_open_exchange"),
      ).toEqual([]);
      const abandoned = aborts.slice(0, -1).filter(Boolean).length;
      expect(syntheticResults(stored)).toHaveLength(abandoned);
      expect(toolResults(stored).filter((m) => m.content === "lookup result for alpha")).toHaveLength(aborts.length);
    });

    it("(7) without this package the same abort and new message is rejected by the provider", async () => {
      const env = await setup(provider, kind, "send", { wrap: false, requestNet: false });
      await runAbortedMidTool(env.agent, env.bench, say("first"), "t", env.inner);
      await expect(env.agent.graph.invoke(say("second"), threadConfig("t"))).rejects.toThrow(PROVIDER_ERROR[provider]);
      expect(env.model.stub.rejections.map((r) => r.rule)).toEqual([provider === "bedrock" ? "B1" : "O1"]);
    });

    it("with the wrapper alone, the abandoning run's own request is stale, but the stored thread is repaired structurally", async () => {
      const env = await setup(provider, kind, "send", { requestNet: false });
      await runAbortedMidTool(env.agent, env.bench, say("first"), "t", env.inner);
      const callIds = firstCallIds(await storedThread(env.inner, "t"));
      await expect(env.agent.graph.invoke(say("second"), threadConfig("t"))).rejects.toThrow(PROVIDER_ERROR[provider]);
      expectRepairedThread(await storedThread(env.inner, "t"), callIds, "send", env.model.provider);

      if (provider === "openai") {
        // OpenAI needs nothing beyond the structural fix: a resume now succeeds.
        const result = await env.agent.graph.invoke(null, threadConfig("t"));
        expect(result.messages.at(-1)?.content).toMatch(/^answer/);
        expect(env.model.stub.rejections).toHaveLength(1);
      } else {
        // Bedrock also needs the request shaped (the placeholder result, then the user's message: two user
        // turns, B6), which storage never holds: the wrapper alone is not enough there (docs/checkpointer.md).
        await expect(env.agent.graph.invoke(null, threadConfig("t"))).rejects.toThrow(
          /alternate between user and assistant/,
        );
        expect(env.model.stub.rejections.map((r) => r.rule)).toEqual(["B1", "B6"]);
      }
    });
  });
});
