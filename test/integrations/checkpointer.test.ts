import { type AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import {
  BaseCheckpointSaver,
  uuid6,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import type { RunnableConfig } from "@langchain/core/runnables";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { findToolCallProblems } from "../../src/engine";
import { withToolCallRepair } from "../../src/integrations/checkpointer";
import { isSyntheticResult } from "../../src/messages/inspect";
import type { ToolCallRepair } from "../../src/types";
import { ai, aiWithCalls, human, shape, toolResult } from "../support/builders";

type StoreOptions = {
  ns?: string;
  parentId?: string;
  source?: CheckpointMetadata["source"];
  input?: boolean;
  key?: string;
};

function checkpointOf(messages: BaseMessage[], options: StoreOptions = {}): Checkpoint {
  const key = options.key ?? "messages";
  return {
    v: 4,
    id: uuid6(-1),
    ts: new Date().toISOString(),
    channel_values: { [key]: messages, ...(options.input ? { __start__: { messages: [human("new")] } } : {}) },
    channel_versions: { [key]: 1 },
    versions_seen: {},
  };
}

/** Stores `messages` as a checkpoint of `thread` (child of `parentId`) through `saver`; returns its config. */
async function store(saver: BaseCheckpointSaver, thread: string, messages: BaseMessage[], options: StoreOptions = {}) {
  const checkpoint = checkpointOf(messages, options);
  const config: RunnableConfig = {
    configurable: {
      thread_id: thread,
      checkpoint_ns: options.ns ?? "",
      ...(options.parentId ? { checkpoint_id: options.parentId } : {}),
    },
  };
  const metadata: CheckpointMetadata = { source: options.source ?? "loop", step: 1, parents: {} };
  const written = await saver.put(config, checkpoint, metadata, {});
  return { config: written, id: checkpoint.id, checkpoint };
}

const messagesIn = (tuple: CheckpointTuple | undefined, key = "messages") =>
  tuple?.checkpoint.channel_values[key] as BaseMessage[];
const configOf = (thread: string, ns = "") => ({ configurable: { thread_id: thread, checkpoint_ns: ns } });
/** A placeholder as a surface writes it for an open call: marked synthetic, under the id the surface gives it. */
const placeholder = (id: string) =>
  new ToolMessage({
    content: "placeholder",
    tool_call_id: id,
    status: "error",
    id: `tool-repair-${id}`,
    additional_kwargs: { tool_call_repair: { synthetic: true, reason: "orphan_call" } },
  });

const recorder = () => {
  const repairs: ToolCallRepair[] = [];
  return { repairs, onRepair: (r: ToolCallRepair) => void repairs.push(r) };
};

/** A saver whose getTuple hands out one fixed object, to check identity and non-mutation. */
class FixedTupleSaver extends MemorySaver {
  constructor(readonly tuple: CheckpointTuple) {
    super();
  }
  override async getTuple(_config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return this.tuple;
  }
}
const fixedTuple = (messages: BaseMessage[]): CheckpointTuple => ({
  config: { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: "c1" } },
  checkpoint: checkpointOf(messages),
  metadata: { source: "loop", step: 3, parents: {} },
  pendingWrites: [],
});

describe("withToolCallRepair: delegation", () => {
  it("is still a BaseCheckpointSaver of the same class, with the inner saver's own members", () => {
    const inner = SqliteSaver.fromConnString(":memory:");
    const wrapped = withToolCallRepair(inner);
    expect(wrapped).toBeInstanceOf(BaseCheckpointSaver);
    expect(wrapped).toBeInstanceOf(SqliteSaver);
    expect(wrapped.serde).toBe(inner.serde);
    expect(wrapped.db).toBe(inner.db);
    // The inner saver's integer step, plus a fraction that keeps two branches of a thread apart (checkpoint-versions).
    const next = wrapped.getNextVersion(undefined) as number;
    expect(Math.floor(next)).toBe(inner.getNextVersion(undefined));
    expect(next).toBeGreaterThan(inner.getNextVersion(undefined) as number);
    // toJSON arrived in @langchain/langgraph-checkpoint-sqlite after 1.0.0: delegated where the inner saver has it.
    if (typeof (inner as { toJSON?: unknown }).toJSON === "function") expect(wrapped.toJSON()).toBe("[SqliteSaver]");
  });

  it("delegates putWrites, deleteThread and an unrepaired list", async () => {
    const inner = new MemorySaver();
    const wrapped = withToolCallRepair(inner);
    const broken = [human(), aiWithCalls("a"), human("next"), ai()];
    const { config } = await store(wrapped, "t", broken, { source: "update" });
    await wrapped.putWrites(config, [["messages", [toolResult("z")]]], "task-1");
    expect((await inner.getTuple(config))?.pendingWrites).toEqual([["task-1", "messages", [expect.any(ToolMessage)]]]);
    const listed: CheckpointTuple[] = [];
    for await (const tuple of wrapped.list(configOf("t"))) listed.push(tuple);
    expect(listed).toHaveLength(1);
    await wrapped.deleteThread("t");
    expect(await inner.getTuple(configOf("t"))).toBeUndefined();
  });
});

describe("withToolCallRepair: reading", () => {
  it("hands out the inner saver's tuple itself for a clean thread", async () => {
    const tuple = fixedTuple([human(), aiWithCalls("a"), toolResult("a"), ai()]);
    expect(await withToolCallRepair(new FixedTupleSaver(tuple)).getTuple(configOf("t"))).toBe(tuple);
  });

  it("repairs an orphan call that is not the last exchange into a copy, leaving the inner tuple alone", async () => {
    const broken = [human(), aiWithCalls("a"), human("next"), ai("fine")];
    const tuple = fixedTuple(broken);
    const repaired = await withToolCallRepair(new FixedTupleSaver(tuple), { provider: "openai" }).getTuple(
      configOf("t"),
    );
    expect(shape(messagesIn(repaired))).toBe("human, ai[a], tool(a), human, ai");
    expect(messagesIn(tuple)).toBe(broken);
    expect(shape(broken)).toBe("human, ai[a], human, ai");
    expect(repaired?.metadata).toBe(tuple.metadata);
    expect(repaired?.pendingWrites).toBe(tuple.pendingWrites);
  });

  it("never touches the last exchange while it has unanswered calls (a resume may still run them)", async () => {
    const partial = [human(), aiWithCalls("a", "b"), toolResult("a")];
    const steered = [human(), aiWithCalls("a"), human("steering message")];
    for (const messages of [partial, steered]) {
      const tuple = fixedTuple(messages);
      expect(await withToolCallRepair(new FixedTupleSaver(tuple)).getTuple(configOf("t"))).toBe(tuple);
    }
  });

  it("repairs orphan and duplicate results while keeping an open last exchange", async () => {
    const last = aiWithCalls("b");
    const tuple = fixedTuple([
      human(),
      aiWithCalls("a"),
      toolResult("a", "x"),
      toolResult("a", "x"),
      toolResult("gone"),
      human(),
      last,
    ]);
    const repaired = messagesIn(
      await withToolCallRepair(new FixedTupleSaver(tuple), { provider: "openai" }).getTuple(configOf("t")),
    );
    expect(shape(repaired)).toBe("human, ai[a], tool(a), human, human, ai[b]");
    expect(repaired.at(-1)).toBe(last);
  });

  it("reports a read repair once per stored checkpoint, however often it is read", async () => {
    const { repairs, onRepair } = recorder();
    const wrapped = withToolCallRepair(new FixedTupleSaver(fixedTuple([human(), aiWithCalls("a"), human(), ai()])), {
      onRepair,
      provider: "openai",
    });
    await wrapped.getTuple(configOf("t"));
    await wrapped.getTuple(configOf("t"));
    expect(await wrapped.get(configOf("t"))).toBeDefined();
    expect(repairs.map((r) => r.action)).toEqual(["synthesized_result"]);
  });

  it("reads a custom messages key; list() yields what is stored", async () => {
    const inner = new MemorySaver();
    await store(inner, "t", [human(), aiWithCalls("a"), human(), ai()], { key: "history" });
    const shapes = async (saver: BaseCheckpointSaver) => {
      const out: string[] = [];
      for await (const tuple of saver.list(configOf("t"))) out.push(shape(messagesIn(tuple, "history")));
      return out;
    };
    expect(await shapes(withToolCallRepair(inner, { messagesKey: "history", provider: "openai" }))).toEqual([
      "human, ai[a], human, ai",
    ]);
    expect(
      shape(messagesIn(await withToolCallRepair(inner, { messagesKey: "history" }).getTuple(configOf("t")), "history")),
    ).toBe("human, ai[a], tool(a), human, ai");
    expect(
      shape(messagesIn(await withToolCallRepair(inner, { provider: "openai" }).getTuple(configOf("t")), "history")),
    ).toBe("human, ai[a], human, ai");
  });
});

describe("withToolCallRepair: a new input abandoning a pending exchange", () => {
  /** The state after a run stopped mid-tool: calls a and b open, a's result in the pending writes. */
  async function abortedThread(thread: string, ns = "", inner: BaseCheckpointSaver = new MemorySaver()) {
    const call = aiWithCalls("a", "b");
    const parent = await store(inner, thread, [human("hi"), call], { ns });
    const realA = new ToolMessage({ content: "real result of a", tool_call_id: "a", name: "tool_a", id: "tm-a" });
    await inner.putWrites(
      parent.config,
      [
        ["messages", [realA]],
        ["branch:to:model", null],
      ],
      "task-a",
    );
    await inner.putWrites(parent.config, [["__error__", { message: "aborted" }]], "task-b");
    return { inner, parent, call };
  }

  it("closes the open calls and puts the finished sibling's real result back", async () => {
    const { inner, parent } = await abortedThread("t");
    const { repairs, onRepair } = recorder();
    const wrapped = withToolCallRepair(inner, { onRepair, provider: "openai" });
    const staleList = [...messagesIn(await inner.getTuple(parent.config))];
    const input = await store(wrapped, "t", staleList, { parentId: parent.id, source: "input", input: true });

    expect(messagesIn({ checkpoint: input.checkpoint } as CheckpointTuple)).toBe(staleList);
    const stored = messagesIn(await inner.getTuple(input.config));
    expect(shape(stored)).toBe("human, ai[a,b], tool(a), tool(b)");
    expect(stored[2]).toMatchObject({ content: "real result of a", id: "tm-a" });
    expect(isSyntheticResult(stored[2])).toBe(false);
    expect(isSyntheticResult(stored[3])).toBe(true);
    expect(repairs.map((r) => [r.action, r.toolCallId])).toEqual([
      ["salvaged_result", "a"],
      ["synthesized_result", "b"],
    ]);
  });

  it("repairs each later put of that run (its in-memory list is stale), reporting nothing twice", async () => {
    const { inner, parent, call } = await abortedThread("t");
    const { repairs, onRepair } = recorder();
    const wrapped = withToolCallRepair(inner, { onRepair, provider: "openai" });
    const input = await store(wrapped, "t", [human("hi"), call], { parentId: parent.id, source: "input", input: true });
    const afterStart = await store(wrapped, "t", [human("hi"), call, human("new")], { parentId: input.id });
    const afterModel = await store(wrapped, "t", [human("hi"), call, human("new"), ai("answer")], {
      parentId: afterStart.id,
    });

    for (const { config } of [afterStart, afterModel]) {
      const stored = messagesIn(await inner.getTuple(config));
      expect(shape(stored).startsWith("human, ai[a,b], tool(a), tool(b), human")).toBe(true);
      expect(stored[2].content).toBe("real result of a");
      expect(findToolCallProblems(stored, { provider: "openai", trailingIsProblem: false })).toEqual([]);
    }
    expect(repairs.map((r) => r.toolCallId)).toEqual(["a", "b"]);
  });

  it("forgets a deleted thread: a new thread under the same id never gets the old thread's real result", async () => {
    const { inner, parent, call } = await abortedThread("t");
    const wrapped = withToolCallRepair(inner, { provider: "openai" });
    await store(wrapped, "t", [human("hi"), call], { parentId: parent.id, source: "input", input: true });
    await wrapped.deleteThread("t");
    // The same id again, and a call id the model reuses (`call_0` style): its run is abandoned with no result anywhere.
    const again = await store(inner, "t", [human("again"), aiWithCalls("a")]);
    const input = await store(wrapped, "t", [human("again"), aiWithCalls("a")], {
      parentId: again.id,
      source: "input",
      input: true,
    });
    const stored = messagesIn(await inner.getTuple(input.config));
    expect(shape(stored)).toBe("human, ai[a], tool(a)");
    expect(isSyntheticResult(stored[2])).toBe(true);
  });

  it("replaces placeholders a pre-model node wrote for a salvaged call with its real result", async () => {
    const { inner, parent, call } = await abortedThread("t");
    const wrapped = withToolCallRepair(inner, { provider: "openai" });
    const input = await store(wrapped, "t", [human("hi"), call], { parentId: parent.id, source: "input", input: true });
    const closedByNode = messagesIn(await inner.getTuple(input.config)).map((m, i) =>
      i === 2
        ? new ToolMessage({
            content: "placeholder",
            tool_call_id: "a",
            status: "error",
            id: "tool-repair-a",
            additional_kwargs: { tool_call_repair: { synthetic: true, reason: "orphan_call" } },
          })
        : m,
    );
    const next = await store(wrapped, "t", [...closedByNode, human("new")], { parentId: input.id });
    expect(messagesIn(await inner.getTuple(next.config))[2].content).toBe("real result of a");
  });

  it(
    "durability exit: a run's only write, already closed with placeholders by the surface, gets the " +
      "real results of its parent's pending writes",
    async () => {
      // With durability "exit" LangGraph writes no new-input checkpoint: the wrapper sees one put, whose list the
      // middleware or node already closed with marked placeholders, so it looks clean.
      const { inner, parent, call } = await abortedThread("t");
      const { repairs, onRepair } = recorder();
      const wrapped = withToolCallRepair(inner, { onRepair, provider: "openai" });
      const closedBySurface = [human("hi"), call, placeholder("a"), placeholder("b"), human("new"), ai("answer")];
      const exit = await store(wrapped, "t", closedBySurface, { parentId: parent.id });

      const stored = messagesIn(await inner.getTuple(exit.config));
      expect(shape(stored)).toBe("human, ai[a,b], tool(a), tool(b), human, ai");
      expect(stored[2]).toMatchObject({ content: "real result of a", id: "tm-a" });
      expect(isSyntheticResult(stored[3])).toBe(true);
      expect(repairs.map((r) => [r.action, r.toolCallId])).toEqual([["salvaged_result", "a"]]);
      // The same placeholder is looked up once: a later put of the thread costs no read of its parent.
      const reads = vi.spyOn(inner, "getTuple");
      await store(wrapped, "t", [...closedBySurface, human("again"), ai("again")], { parentId: exit.id });
      expect(reads).not.toHaveBeenCalled();
    },
  );

  it.each([
    ["MemorySaver", () => new MemorySaver()],
    ["SqliteSaver", () => SqliteSaver.fromConnString(":memory:")],
  ])(
    "%s: after a clean put's placeholder is swapped for the real result, the same run's next put (its list still " +
      "holding the placeholder) keeps the real result",
    async (_name, saver) => {
      const { inner, parent, call } = await abortedThread("t", "", saver());
      const wrapped = withToolCallRepair(inner, { provider: "openai" });
      // The run's in-memory list: the surface closed both calls with marked placeholders, so each put looks clean.
      const closedBySurface = [human("hi"), call, placeholder("a"), placeholder("b"), human("new")];
      const first = await store(wrapped, "t", closedBySurface, { parentId: parent.id });
      expect(messagesIn(await inner.getTuple(first.config))[2]).toMatchObject({ content: "real result of a" });
      // The same run's next step (child of the swapped checkpoint) still writes its stale list, placeholder "a" included.
      const next = await store(wrapped, "t", [...closedBySurface, ai("answer")], { parentId: first.id });

      const stored = messagesIn(await inner.getTuple(next.config));
      expect(shape(stored)).toBe("human, ai[a,b], tool(a), tool(b), human, ai");
      expect(stored[2]).toMatchObject({ content: "real result of a", id: "tm-a" });
      expect(isSyntheticResult(stored[2])).toBe(false);
      expect(isSyntheticResult(stored[3])).toBe(true);
      // What the next model call is built from: the thread's latest checkpoint as the wrapper hands it out.
      const latest = messagesIn(await wrapped.getTuple(configOf("t")));
      expect(latest[2]).toMatchObject({ content: "real result of a", id: "tm-a" });
      expect(findToolCallProblems(latest, { provider: "openai", trailingIsProblem: false })).toEqual([]);
    },
  );

  it("hands a run the user message a run aborted before its first step left in __start__: in the list already", async () => {
    // Run 1 stored its input checkpoint (the message in __start__) and was aborted before applying it. A new input
    // would drop it (LangGraph discards the pending __start__ task); a resume applies it again, replacing the
    // message of the same id in place.
    for (const earlier of [[human("hi"), ai("hello")], []]) {
      const inner = new MemorySaver();
      const first = new HumanMessage({ content: "first question", id: "h-first" });
      const unnamed = new HumanMessage({ content: "and this" });
      const aborted = checkpointOf(earlier, { source: "input" });
      aborted.channel_values.__start__ = { messages: [first, unnamed] };
      if (earlier.length === 0) delete aborted.channel_values.messages; // a new thread's first checkpoint
      await (inner as BaseCheckpointSaver).put(configOf("t"), aborted, { source: "input", step: -1, parents: {} }, {});
      const wrapped = withToolCallRepair(inner, { provider: "openai" });
      const read = (await wrapped.getTuple(configOf("t")))!.checkpoint.channel_values;
      const list = read.messages as BaseMessage[];
      expect(list.slice(0, earlier.length + 1).map((m) => m.id)).toEqual([...earlier.map((m) => m.id), "h-first"]);
      expect(list.at(-1)).toMatchObject({ content: "and this" });
      expect((read.__start__ as { messages: BaseMessage[] }).messages.map((m) => m.id)).toEqual(
        list.slice(earlier.length).map((m) => m.id),
      );
      // Stored as it was: the read hands out a copy.
      expect((await inner.getTuple(configOf("t")))!.checkpoint.channel_values.messages).toEqual(
        earlier.length === 0 ? undefined : earlier,
      );
    }
  });

  it("leaves the exchange open for a Command({ update }) input, which keeps the pending step", async () => {
    const { inner, parent, call } = await abortedThread("t");
    const wrapped = withToolCallRepair(inner, { provider: "openai" });
    const update = await store(wrapped, "t", [human("hi"), call, human("steer")], {
      parentId: parent.id,
      source: "input",
    });
    expect(shape(messagesIn(await inner.getTuple(update.config)))).toBe("human, ai[a,b], human");
  });

  it("keeps subgraph namespaces apart", async () => {
    const { inner, parent, call } = await abortedThread("t", "agent");
    const wrapped = withToolCallRepair(inner, { provider: "openai" });
    const input = await store(wrapped, "t", [human("hi"), call], {
      ns: "agent",
      parentId: parent.id,
      source: "input",
      input: true,
    });
    expect(input.config.configurable?.checkpoint_ns).toBe("agent");
    const stored = messagesIn(await inner.getTuple(input.config));
    expect(stored[2].content).toBe("real result of a");
    // The root namespace of the same thread holds nothing of this.
    expect(await inner.getTuple(configOf("t"))).toBeUndefined();
  });
});

describe("withToolCallRepair: other writes", () => {
  it("stores a repaired list when a run wrote a broken one, keeping its open last exchange", async () => {
    const inner = new MemorySaver();
    const wrapped = withToolCallRepair(inner, { provider: "openai" });
    const last = aiWithCalls("b");
    const { config } = await store(wrapped, "t", [human(), aiWithCalls("a"), human("next"), last]);
    const stored = messagesIn(await inner.getTuple(config));
    expect(shape(stored)).toBe("human, ai[a], tool(a), human, ai[b]");
  });

  it("passes a clean write through untouched", async () => {
    const inner = new MemorySaver();
    const messages = [human(), aiWithCalls("a"), toolResult("a"), ai()];
    const { config } = await store(withToolCallRepair(inner), "t", messages);
    expect(messagesIn(await inner.getTuple(config)).map((m) => m.id)).toEqual(messages.map((m) => m.id));
  });
});

describe("withToolCallRepair in a graph", () => {
  const lookup = tool(async ({ q }) => `found ${q}`, {
    name: "lookup",
    description: "look up",
    schema: z.object({ q: z.string() }),
  });

  it("does not close calls that a Command({ update }) run still executes", async () => {
    let runs = 0;
    const flaky = tool(
      async ({ q }) => {
        if (++runs === 1) throw new Error("tool crashed");
        return `found ${q}`;
      },
      { name: "tool_a", description: "look up", schema: z.object({ q: z.string() }) },
    );
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("model", async (state) => ({ messages: [state.messages.length === 1 ? aiWithCalls("a") : ai("done")] }))
      .addNode("tools", new ToolNode([flaky], { handleToolErrors: false }))
      .addEdge(START, "model")
      .addConditionalEdges("model", (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END))
      .addEdge("tools", "model")
      .compile({ checkpointer: withToolCallRepair(new MemorySaver()) });
    const config = configOf("cmd");
    await expect(graph.invoke({ messages: [human("hi")] }, config)).rejects.toThrow("tool crashed");
    const result = await graph.invoke(new Command({ update: { messages: [human("steer")] } }), config);
    expect(runs).toBe(2);
    const results = result.messages.filter((m: BaseMessage) => ToolMessage.isInstance(m));
    expect(results.map((m: ToolMessage) => [m.content, isSyntheticResult(m)])).toEqual([["found a", false]]);
  });

  it("repairs the thread of a subgraph that keeps its own checkpoints (checkpoint_ns)", async () => {
    let calls = 0;
    const agent = new StateGraph(MessagesAnnotation)
      .addNode("model", async (state) => {
        calls++;
        return { messages: [HumanMessage.isInstance(state.messages.at(-1)) ? aiWithCalls(`c${calls}`) : ai("done")] };
      })
      .addNode("tools", new ToolNode([lookup]))
      .addEdge(START, "model")
      .addConditionalEdges("model", (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END))
      .addEdge("tools", "model")
      .compile({ checkpointer: true, interruptBefore: ["tools"] });
    const inner = new MemorySaver();
    const { repairs, onRepair } = recorder();
    const parent = new StateGraph(MessagesAnnotation)
      .addNode("agent", agent)
      .addEdge(START, "agent")
      .addEdge("agent", END)
      .compile({ checkpointer: withToolCallRepair(inner, { onRepair, provider: "openai" }) });
    const config = configOf("sub");
    await parent.invoke({ messages: [human("first")] }, config);
    await parent.invoke({ messages: [human("second")] }, config);

    const subThread = messagesIn(await inner.getTuple(configOf("sub", "agent")));
    expect(shape(subThread).startsWith("human, ai[c1], tool(c1), human")).toBe(true);
    expect(isSyntheticResult(subThread[2])).toBe(true);
    expect(repairs.some((r) => r.toolCallId === "c1" && r.action === "synthesized_result")).toBe(true);
  });
});
