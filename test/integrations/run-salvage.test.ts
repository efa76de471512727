/**
 * What the pieces read back from the run's checkpointer (src/integrations/run-salvage.ts), beyond the abort sweep
 * (which checks the salvaged results in the model's request on every surface, saver and durability): a call a
 * person was asked to approve and never did gets a placeholder saying the user cancelled it; a tool that asked a
 * question itself had started, so its outcome stays unknown; no checkpointer, nothing read.
 */
import { HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent, humanInTheLoopMiddleware } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { toolCallRepair } from "../../src/integrations/middleware";
import { toolCallRepairNode } from "../../src/integrations/node";
import { toolCallRepairHook } from "../../src/integrations/hook";
import { repairMarkerOf } from "../../src/messages/inspect";
import type { ToolCallRepair } from "../../src/types";
import { aiWithCalls, human } from "../support/builders";
import { openAIModel, startOpenAIStub, type RunningStub } from "../support/stubs";
import { sentToolResults } from "./support/abort-sweep";
import {
  bothToolsThenAnswer,
  buildAgent,
  firstCallIds,
  startStubbedModel,
  storedThread,
  threadConfig,
  ToolBench,
  until,
} from "./support/checkpoint-scenarios";
import { withToolCallRepair } from "../../src/integrations/checkpointer";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const interruptsOf = (state: unknown) => (state as { __interrupt__?: unknown[] }).__interrupt__;

describe("a call waiting for a person's approval, then a new message instead", () => {
  it(
    "createAgent + human-in-the-loop: the model is told the user cancelled it (it did not run), the " +
      "marker and onRepair say so",
    async () => {
      const stub: RunningStub = await startOpenAIStub({ script: bothToolsThenAnswer("ok") });
      cleanups.push(() => stub.close());
      const bench = new ToolBench();
      const inner = new MemorySaver();
      const repairs: ToolCallRepair[] = [];
      const repair = toolCallRepair({ onRepair: (r) => repairs.push(r) });
      const agent = createAgent({
        model: openAIModel(stub),
        tools: bench.all,
        middleware: [humanInTheLoopMiddleware({ interruptOn: { slow_lookup: true } }), repair.middleware],
        checkpointer: repair.checkpointer(inner),
      });

      const paused = await agent.invoke({ messages: [new HumanMessage("look both up")] }, threadConfig("t"));
      expect(interruptsOf(paused)).toHaveLength(1);
      const [lookupId, slowId] = firstCallIds(await storedThread(inner, "t"));

      await agent.invoke({ messages: [new HumanMessage("never mind")] }, threadConfig("t"));
      expect(stub.rejections).toEqual([]);
      const sent = sentToolResults("openai", stub.requests[1]);
      expect(sent.get(slowId)).toBe(
        'Tool "slow_lookup" (call ' +
          slowId +
          ") did not run: it was waiting for the user's approval, and the user sent a new message instead. " +
          "Do not run it unless the user asks for it again.",
      );
      // The auto-approved sibling was never scheduled either (the approval came first), but nothing says so: unknown.
      expect(sent.get(lookupId)).toMatch(/its outcome is unknown/);
      expect(bench.started.size).toBe(0);

      const stored = await storedThread(inner, "t");
      const placeholder = stored.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === slowId);
      expect(repairMarkerOf(placeholder)).toMatchObject({ synthetic: true, toolRun: "cancelled" });
      expect(repairs.filter((r) => r.toolCallId === slowId)).toEqual([
        expect.objectContaining({ action: "synthesized_result", toolRun: "cancelled" }),
      ]);
    },
  );

  it("a tool that asked the person a question itself (interrupt() inside it) had started: its outcome stays unknown", async () => {
    const model = await startStubbedModel("openai", [{ name: "ask_human", args: { q: "may I?" } }]);
    cleanups.push(() => model.stub.close());
    const bench = new ToolBench();
    const inner = new MemorySaver();
    const agent = buildAgent({ model, bench, checkpointer: withToolCallRepair(inner), mode: "send", requestNet: true });
    await agent.graph.invoke({ messages: [new HumanMessage("ask")] }, threadConfig("t"));
    expect(bench.started.size).toBe(1);
    // A node before the model stands for the surfaces (here the graph's own net repairs the request).
    const node = toolCallRepairNode();
    const messages = [...(await storedThread(inner, "t")), new HumanMessage("something else")];
    const update = (await node(
      { messages },
      { configurable: { thread_id: "t", __pregel_checkpointer: inner, checkpoint_ns: "repair:x" } },
    )) as {
      messages: BaseMessage[];
    };
    const placeholder = update.messages.find((m) => ToolMessage.isInstance(m));
    expect(repairMarkerOf(placeholder)).toMatchObject({ toolRun: "outcome_unknown" });
  });
});

describe("without a checkpointer in the run's config", () => {
  it("nothing is read: the open call gets the engine's placeholder", async () => {
    const node = toolCallRepairNode();
    const update = (await node(
      { messages: [human("q"), aiWithCalls("c1"), human("next")] },
      { configurable: { thread_id: "t" } },
    )) as { messages: BaseMessage[] };
    expect(repairMarkerOf(update.messages.find((m) => ToolMessage.isInstance(m)))).toMatchObject({
      toolRun: "outcome_unknown",
    });
  });
});

describe("open calls that stay open in state (the hook without persist, no wrapper)", () => {
  it("each later turn still sends the salvaged result, and reads the saver no more than the turn before", async () => {
    const stub = await startOpenAIStub({ script: bothToolsThenAnswer("ok", ["a", "b"]) });
    cleanups.push(() => stub.close());
    const bench = new ToolBench();
    const saver = new MemorySaver();
    let reads = 0;
    const getTuple = saver.getTuple.bind(saver);
    saver.getTuple = (config) => {
      reads++;
      return getTuple(config);
    };
    const preModelHook = toolCallRepairHook();
    const agent = createReactAgent({
      llm: openAIModel(stub),
      tools: bench.all,
      version: "v2",
      preModelHook,
      checkpointer: saver,
    });
    const controller = new AbortController();
    bench.holdSlow = true;
    const slowStarted = bench.nextSlowStart();
    const input = { messages: [new HumanMessage("look both up")] };
    const first = agent.invoke(input, { ...threadConfig("t"), signal: controller.signal }).catch(() => undefined);
    await slowStarted;
    const pending = async () => (await getTuple(threadConfig("t")))?.pendingWrites ?? [];
    const lookupStored = async () => (await pending()).some(([, channel]) => channel === "messages");
    await until(lookupStored, "the lookup's write");
    controller.abort();
    await first;
    bench.holdSlow = false;
    const [lookupId] = firstCallIds(await storedThread(saver, "t"));

    // The open calls stay in state: the hook finds their results again before every model call of every turn.
    const readsPerTurn: number[] = [];
    for (let turn = 0; turn < 5; turn++) {
      const before = reads;
      await agent.invoke({ messages: [new HumanMessage(`question ${turn}`)] }, threadConfig("t"));
      readsPerTurn.push(reads - before);
      expect(sentToolResults("openai", stub.requests.at(-1)).get(lookupId)).toBe("lookup result for a");
    }
    expect(stub.rejections).toEqual([]);
    // Walking back to the aborted step at each model call cost a read more per step since: a thread's life, quadratic.
    expect(new Set(readsPerTurn.slice(1)).size).toBe(1);
  });
});
