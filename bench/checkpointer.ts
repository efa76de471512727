/**
 * Checkpointer wrapper overhead: getTuple and put of a clean 1,000-message thread through
 * `withToolCallRepair(saver)` against the bare saver, side by side (MemorySaver, SqliteSaver in memory).
 * Also the graph node on a clean state: what it returns and whether it allocates per call.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { emptyCheckpoint, type BaseCheckpointSaver, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { withToolCallRepair } from "../src/integrations/checkpointer";
import { createRepairer } from "../src/engine";
import { toolCallRepairNode } from "../src/integrations/node";
import { NO_UPDATE } from "../src/integrations/state-update";
import { orderedSaverMethods } from "../src/integrations/thread-order";
import { cleanHistory } from "./histories";
import { compare, compareAsync, fmt } from "./harness";

function checkpointWith(messages: unknown[], n: number): Checkpoint {
  const base = emptyCheckpoint();
  return {
    ...base,
    id: `00000000-0000-6000-8000-${String(n).padStart(12, "0")}`,
    channel_values: { messages },
    channel_versions: { messages: n },
  };
}

/** A run's config: LangGraph hands the saver the run's signal, which the wrapper keys its thread order on. */
const RUN = { signal: new AbortController().signal };

async function seed(saver: BaseCheckpointSaver, thread: string, messages: unknown[]) {
  const first = { configurable: { thread_id: thread, checkpoint_ns: "" } };
  const config = await saver.put(
    first,
    checkpointWith(messages, 1),
    { source: "loop", step: 1, parents: {} },
    { messages: 1 },
  );
  return { ...config, ...RUN };
}

/** The wrapper's own clean check of a stored thread. */
const storedCheck = createRepairer({ level: "structural", trailing: "keep" });

export async function runCheckpointerBench(): Promise<string[]> {
  const lines = ["## Checkpointer wrapper on a clean thread of 1,000 messages"];
  lines.push(
    "The wrapper's own work on a clean thread is one walk over its messages (last column, timed alone), and its",
  );
  lines.push("thread order's bookkeeping (every call carries a live abort signal, as a run's do);");
  lines.push("bare and wrapped are timed side by side, so their ratio also carries the machine's noise.");
  lines.push("");
  lines.push("| saver | tool results | operation | bare | wrapped | ratio | the walk alone |");
  lines.push("|---|---|---|---:|---:|---:|---:|");
  for (const [sizes, messages] of [
    ["100 B", cleanHistory(1_000, () => 100)],
    ["100 B to 100 KB", cleanHistory(1_000)],
  ] as const)
    for (const [name, make] of [
      ["MemorySaver", () => new MemorySaver()],
      ["SqliteSaver", () => SqliteSaver.fromConnString(":memory:")],
    ] as const) {
      const bare = make();
      const wrapped = withToolCallRepair(make());
      const bareConfig = await seed(bare, "t", messages);
      const wrappedConfig = await seed(wrapped, "t", messages);
      const [getBare, getWrapped] = await compareAsync(
        [
          { name: "bare", fn: () => bare.getTuple(bareConfig) },
          { name: "wrapped", fn: () => wrapped.getTuple(wrappedConfig) },
        ],
        { rounds: 15, iterations: 5 },
      );
      const stored = (await bare.getTuple(bareConfig))!.checkpoint.channel_values.messages as unknown[];
      const other = (await bare.getTuple(bareConfig))!.checkpoint.channel_values.messages as unknown[];
      let flip = false;
      // Two deserialized copies alternate, so every walk is a first check, as after each read.
      const [walk] = compare([{ name: "walk", fn: () => storedCheck.isClean((flip = !flip) ? stored : other) }]);
      lines.push(
        `| ${name} | ${sizes} | getTuple | ${fmt(getBare.nsPerCall)} | ${fmt(getWrapped.nsPerCall)} | ` +
          `${(getWrapped.nsPerCall / getBare.nsPerCall).toFixed(3)}x | ${fmt(walk.nsPerCall)} ` +
          `(${((100 * walk.nsPerCall) / getBare.nsPerCall).toFixed(2)}%) |`,
      );
      let n = 2;
      // Each write names the previous one as its parent, as a run's writes do.
      const put = (saver: BaseCheckpointSaver, thread: string) => {
        let parent: RunnableConfig = { configurable: { thread_id: thread, checkpoint_ns: "" } };
        return async () => {
          const version = n++;
          const metadata = { source: "loop" as const, step: n, parents: {} };
          return (parent = await saver.put({ ...parent, ...RUN }, checkpointWith(messages, version), metadata, {
            messages: n,
          }));
        };
      };
      const [putBare, putWrapped] = await compareAsync(
        [
          { name: "bare", fn: put(bare, "p") },
          { name: "wrapped", fn: put(wrapped, "p2") },
        ],
        { rounds: 15, iterations: 5 },
      );
      lines.push(
        `| ${name} | ${sizes} | put | ${fmt(putBare.nsPerCall)} | ${fmt(putWrapped.nsPerCall)} | ` +
          `${(putWrapped.nsPerCall / putBare.nsPerCall).toFixed(3)}x | same walk |`,
      );
    }

  lines.push("");
  lines.push(...(await threadOrderLines()));

  lines.push("");
  lines.push("## toolCallRepairNode on a clean state of 1,000 messages");
  const node = toolCallRepairNode();
  const state = { messages: cleanHistory(1_000) };
  const config = {};
  const gc = (globalThis as { gc?: () => void }).gc;
  /** Heap growth per call over 100,000 calls after a forced GC (an empty function gives the noise floor). */
  const heapPerCall = (fn: () => unknown) => {
    for (let i = 0; i < 1_000; i++) fn();
    gc?.();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100_000; i++) fn();
    return (process.memoryUsage().heapUsed - before) / 100_000;
  };
  const sameUpdate = node(state as never, config as never) === NO_UPDATE && state.messages.length === 1_000;
  const floor = heapPerCall(() => 0);
  const perCall = heapPerCall(() => node(state as never, config as never));
  const [t] = compare([{ name: "node", fn: () => node(state as never, config as never) }]);
  lines.push(
    `| per call | returns | heap growth per call${gc ? "" : " (run without --expose-gc: not comparable)"} | same for an empty function |`,
  );
  lines.push("|---:|---|---:|---:|");
  lines.push(
    `| ${fmt(t.nsPerCall)} | ` +
      `${sameUpdate ? "a shared frozen {} (no update), state untouched" : "SOMETHING ELSE"} | ` +
      `${perCall.toFixed(1)} B | ${floor.toFixed(1)} B |`,
  );
  return lines;
}

/**
 * The thread order's own work (no lost update, src/integrations/thread-order.ts), timed around a saver that
 * answers at once, so nothing but the bookkeeping is measured: per read and per write of a live run, and the
 * wait of the first read after an aborted run's last write.
 */
async function threadOrderLines(): Promise<string[]> {
  const instant = {
    getTuple: async () => undefined,
    get: async () => undefined,
    put: async (config: RunnableConfig) => config,
    putWrites: async () => {},
  };
  const ordered = orderedSaverMethods(instant, instant);
  const live = { configurable: { thread_id: "t", checkpoint_ns: "" }, ...RUN };
  const checkpoint = checkpointWith([], 1);
  const metadata = { source: "loop" as const, step: 1, parents: {} };
  let thread = 0;
  const afterAbort = async () => {
    const aborted = new AbortController();
    aborted.abort();
    const config = { configurable: { thread_id: `a${++thread}`, checkpoint_ns: "" } };
    await ordered.putWrites({ ...config, signal: aborted.signal }, [], "task");
    return ordered.getTuple({ ...config, ...RUN });
  };
  const [alone, read, write, waited] = await compareAsync(
    [
      { name: "saver alone", fn: () => instant.getTuple() },
      { name: "read", fn: () => ordered.getTuple(live) },
      { name: "write", fn: () => ordered.put(live, checkpoint, metadata, {}) },
      { name: "after an abort", fn: afterAbort },
    ],
    { rounds: 15, iterations: 200 },
  );
  return [
    "## Thread order (no lost update): its own work per call",
    "Timed around a saver that answers at once, so only the bookkeeping is measured (a live run's call, with its signal).",
    "",
    "| the saver alone | a read | a write | an aborted run's write, then the next run's first read |",
    "|---:|---:|---:|---:|",
    `| ${fmt(alone.nsPerCall)} | ${fmt(read.nsPerCall)} | ${fmt(write.nsPerCall)} | ${fmt(waited.nsPerCall)} |`,
  ];
}
