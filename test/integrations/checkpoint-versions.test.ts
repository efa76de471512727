/**
 * Channel versions that two branches of one thread never share (src/integrations/checkpoint-versions.ts).
 *
 * PostgresSaver stores one blob per (thread, namespace, channel, version) and keeps the first one on a conflict,
 * so two checkpoints written from one parent with LangGraph.js's integer versions read back the same messages
 * (pinned for the bare saver in checkpointer-known-failures.test.ts, "two branches of one thread"). The wrapper
 * and the offline repair count versions with a random fraction, as LangGraph Python does with its strings.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import {
  emptyCheckpoint,
  maxChannelVersion,
  uuid6,
  type BaseCheckpointSaver,
  type CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findToolCallProblems } from "../../src/engine";
import { nextBranchVersion } from "../../src/integrations/checkpoint-versions";
import { withToolCallRepair } from "../../src/integrations/checkpointer";
import { repairThreads } from "../../src/threads/repair";
import { postgresSkipReason } from "../support/services";
import { openSaver, type SaverName } from "./support/abort-sweep";

describe("nextBranchVersion", () => {
  const saver = new MemorySaver();

  it("is strictly greater than the version it follows, and below the next integer step", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.constant(undefined),
          fc.integer({ min: 0, max: 1e9 }),
          fc.double({ min: 0, max: 1e9, noNaN: true }),
        ),
        (current) => {
          const next = nextBranchVersion(saver, current) as number;
          const floor = current === undefined ? 0 : Math.floor(current);
          expect(typeof next).toBe("number");
          expect(next).toBeGreaterThan(current ?? 0);
          expect(next).toBeGreaterThan(floor + 1);
          expect(next).toBeLessThan(floor + 2);
        },
      ),
      { seed: 7, numRuns: 500 },
    );
  });

  // Two branches draw from a billion fractions: they collide once in a billion. (Many draws at once would meet
  // the birthday bound: 10,000 of them share a value about once in 20 runs, which is not what two branches do.)
  it("two branches from one version draw different versions", () => {
    for (let pair = 0; pair < 1_000; pair++) expect(nextBranchVersion(saver, 5)).not.toBe(nextBranchVersion(saver, 5));
  });

  it("a saver that counts in strings keeps its own scheme", () => {
    const stringSaver = Object.assign(Object.create(saver) as BaseCheckpointSaver, {
      getNextVersion: (current: unknown) => `v${String(current)}+1`,
    });
    expect(nextBranchVersion(stringSaver, "v1")).toBe("vv1+1");
    expect(nextBranchVersion(stringSaver, 3)).toBe("v3+1");
  });
});

/** A graph that answers every user message with an echo, stored through `saver`. */
function echoGraph(saver: BaseCheckpointSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("bot", (state: typeof MessagesAnnotation.State) => ({
      messages: [new AIMessage({ content: `echo ${String(state.messages.at(-1)?.content)}` })],
    }))
    .addEdge(START, "bot")
    .addEdge("bot", END)
    .compile({ checkpointer: saver });
}

const texts = (messages: unknown) => (messages as BaseMessage[]).map((m) => String(m.content));

const postgresSkip = await postgresSkipReason();
const SAVERS: { name: SaverName; skip?: string }[] = [
  { name: "MemorySaver" },
  { name: "SqliteSaver" },
  { name: "PostgresSaver", skip: postgresSkip },
];

describe.each(SAVERS)("a wrapped $name: two branches from one checkpoint", ({ name, skip }) => {
  it.skipIf(skip !== undefined)(
    `each branch keeps its own messages, and the thread goes on from the latest${skip ? ` (skipped: ${skip})` : ""}`,
    async () => {
      const handle = await openSaver(name, "branches");
      try {
        const saver = withToolCallRepair(handle.saver);
        const graph = echoGraph(saver);
        const thread = { configurable: { thread_id: "t" } };
        await graph.invoke({ messages: [new HumanMessage({ content: "hi", id: "h1" })] }, thread);
        const root = (await saver.getTuple(thread))!;
        // Two runs from the same checkpoint (after an abort, on two workers): branch A, then branch B.
        await graph.invoke({ messages: [new HumanMessage({ content: "A", id: "hA" })] }, root.config);
        const b = await graph.invoke({ messages: [new HumanMessage({ content: "B", id: "hB" })] }, root.config);
        expect(texts(b.messages)).toEqual(["hi", "echo hi", "B", "echo B"]);

        const latest = (await saver.getTuple(thread))!;
        expect(texts(latest.checkpoint.channel_values.messages)).toEqual(["hi", "echo hi", "B", "echo B"]);
        // As the inner saver stores it, not only as the wrapper reads it.
        expect(texts((await handle.saver.getTuple(latest.config))!.checkpoint.channel_values.messages)).toEqual([
          "hi",
          "echo hi",
          "B",
          "echo B",
        ]);
        const next = await graph.invoke({ messages: [new HumanMessage({ content: "C", id: "hC" })] }, thread);
        expect(texts(next.messages)).toEqual(["hi", "echo hi", "B", "echo B", "C", "echo C"]);
      } finally {
        await handle.dispose();
      }
    },
  );
});

describe("an offline repair beside a live run on PostgreSQL", () => {
  it.skipIf(postgresSkip !== undefined)(
    `the live run's checkpoint keeps its own messages${postgresSkip ? ` (skipped: ${postgresSkip})` : ""}`,
    async () => {
      const handle = await openSaver("PostgresSaver", "repair_race");
      try {
        const pg = handle.saver;
        const thread = { configurable: { thread_id: "t", checkpoint_ns: "" } };
        // A broken thread: a call left unanswered, then a new user message.
        const broken = [
          new HumanMessage({ content: "find flights", id: "h1" }),
          new AIMessage({
            content: "",
            id: "a1",
            tool_calls: [{ id: "call_1", name: "search", args: {}, type: "tool_call" }],
          }),
          new HumanMessage({ content: "never mind", id: "h2" }),
        ];
        const graph = echoGraph(pg);
        await graph.updateState(thread, { messages: broken }, "bot");
        const parent = (await pg.getTuple(thread))!;

        // A live run that loaded `parent` stores its next checkpoint right after the repair's (integer versions,
        // as the bare saver counts them).
        let live: ReturnType<BaseCheckpointSaver["put"]> | undefined;
        const livePut = (p: CheckpointTuple) => {
          const versions = p.checkpoint.channel_versions;
          const v = pg.getNextVersion(maxChannelVersion(...Object.values(versions)) as number);
          const messages = [
            ...(p.checkpoint.channel_values.messages as BaseMessage[]),
            new AIMessage({ content: "LIVE ANSWER", id: "live" }),
          ];
          return pg.put(
            p.config,
            {
              ...p.checkpoint,
              id: uuid6(-1),
              ts: new Date().toISOString(),
              channel_values: { ...p.checkpoint.channel_values, messages },
              channel_versions: { ...versions, messages: v },
            },
            { source: "loop", step: 99, parents: {} },
            { messages: v },
          );
        };
        const racing = new Proxy(pg, {
          get(target, property) {
            if (property === "put")
              return async (...args: Parameters<BaseCheckpointSaver["put"]>) => {
                const stored = await target.put(...args);
                live ??= livePut(parent);
                await live;
                return stored;
              };
            const value = Reflect.get(target, property, target);
            return typeof value === "function" ? value.bind(target) : value;
          },
        });
        const reports = [];
        for await (const report of repairThreads(racing, { threads: ["t"], apply: true })) reports.push(report);
        expect(live).toBeDefined();
        const liveTuple = (await pg.getTuple(await live!))!;
        expect(texts(liveTuple.checkpoint.channel_values.messages)).toEqual([
          "find flights",
          "",
          "never mind",
          "LIVE ANSWER",
        ]);
      } finally {
        await handle.dispose();
      }
    },
  );
});

describe("a list the wrapper changes on write, where the run did not change it", () => {
  it.skipIf(postgresSkip !== undefined)(
    `is stored under a version of its own on PostgreSQL${postgresSkip ? ` (skipped: ${postgresSkip})` : ""}`,
    async () => {
      const handle = await openSaver("PostgresSaver", "unchanged_channel");
      try {
        const pg = handle.saver;
        const thread = { configurable: { thread_id: "t", checkpoint_ns: "" } };
        // Stored by a run without the wrapper: a result whose call is gone (a summarizer cut between them).
        const broken = [
          new HumanMessage({ content: "find flights", id: "h1" }),
          new ToolMessage({ content: "3 flights", tool_call_id: "call_gone", id: "t1" }),
          new HumanMessage({ content: "and hotels?", id: "h2" }),
        ];
        const first = await pg.put(
          thread,
          {
            ...emptyCheckpoint(),
            id: uuid6(-1),
            channel_values: { messages: broken },
            channel_versions: { messages: 1 },
          },
          { source: "loop", step: 0, parents: {} },
          { messages: 1 },
        );
        // The next step writes another channel only: the messages keep version 1, and `versions` does not name them.
        const wrapped = withToolCallRepair(pg);
        const next = await wrapped.put(
          first,
          {
            ...emptyCheckpoint(),
            id: uuid6(-1),
            channel_values: { messages: broken, step: "on" },
            channel_versions: { messages: 1, step: 1 },
          },
          { source: "loop", step: 1, parents: {} },
          { step: 1 },
        );
        // What the wrapper stored is what the saver reads back: the repaired list, not the blob of version 1.
        const stored = (await pg.getTuple(next))!.checkpoint.channel_values.messages as BaseMessage[];
        expect(findToolCallProblems(stored, { provider: "strict", level: "structural" })).toEqual([]);
        // Nothing lost: both user messages, and the result's text (set aside as user text).
        expect(stored.map((m) => m.id)).toEqual(expect.arrayContaining(["h1", "h2"]));
        expect(JSON.stringify(stored.map((m) => m.content))).toContain("3 flights");
      } finally {
        await handle.dispose();
      }
    },
  );
});
