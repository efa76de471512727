/**
 * Checkpointer wrapper overhead against PostgreSQL (127.0.0.1:5432, the official PostgresSaver): getTuple and
 * put of a clean 1,000-message thread through `withToolCallRepair(saver)` against the same saver bare, side by
 * side in one run (one pool and one schema, dropped at the end; bare and wrapped use threads of their own).
 * Skipped, with a line, when PostgreSQL is unreachable.
 */
import { emptyCheckpoint, type BaseCheckpointSaver, type Checkpoint } from "@langchain/langgraph-checkpoint";
import { withToolCallRepair } from "../src/integrations/checkpointer";
import { createPostgresSaver, postgresUnavailable } from "../test/support/services";
import { cleanHistory } from "./histories";
import { compareAsync, fmt } from "./harness";

function checkpointWith(messages: unknown[], n: number): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: `00000000-0000-6000-8000-${String(n).padStart(12, "0")}`,
    channel_values: { messages },
    channel_versions: { messages: n },
  };
}

/** A run's config: LangGraph hands the saver the run's signal, which the wrapper keys its thread order on. */
const configOf = (thread: string) => ({
  configurable: { thread_id: thread, checkpoint_ns: "" },
  signal: new AbortController().signal,
});

export async function runPostgresCheckpointerBench(): Promise<string[]> {
  const lines = ["## Checkpointer wrapper against PostgreSQL, clean thread of 1,000 messages"];
  const unavailable = await postgresUnavailable();
  if (unavailable) return [...lines, `Skipped: ${unavailable}.`];
  lines.push(
    "One PostgresSaver, bare and wrapped, timed interleaved in the same rounds (medians of 11 rounds of 3 calls), with",
  );
  lines.push(
    "the bare saver a second time as a control: its ratio to the first is the noise of the server and the machine.",
  );
  lines.push(
    "put writes a new checkpoint whose messages channel changed (the whole list is serialized and stored each time).",
  );
  lines.push(
    "The wrapper's own work on a clean thread is one walk over the messages (see the table above), and its thread order's",
  );
  lines.push(
    "bookkeeping (every call carries a live abort signal, as a run's do). A run's first read carries a new signal:",
  );
  lines.push("the wrapper first asks PostgreSQL whether a lock of the thread is held for an aborted run (one query).");
  lines.push("");
  lines.push("| tool results | operation | bare | wrapped | ratio | bare again (control) | control ratio |");
  lines.push("|---|---|---:|---:|---:|---:|---:|");
  const handle = await createPostgresSaver("bench");
  try {
    const bare: BaseCheckpointSaver = handle.saver;
    const wrapped: BaseCheckpointSaver = withToolCallRepair(handle.saver);
    const row = (sizes: string, operation: string, [b, w, c]: { nsPerCall: number }[]) =>
      `| ${sizes} | ${operation} | ${fmt(b.nsPerCall)} | ${fmt(w.nsPerCall)} | ` +
      `${(w.nsPerCall / b.nsPerCall).toFixed(3)}x | ${fmt(c.nsPerCall)} | ` +
      `${(c.nsPerCall / b.nsPerCall).toFixed(3)}x |`;
    for (const [sizes, messages] of [
      ["100 B", cleanHistory(1_000, () => 100)],
      ["100 B to 10 KB", cleanHistory(1_000, (i) => [100, 1_000, 10_000][i % 3])],
    ] as const) {
      const seeded = { source: "loop" as const, step: 1, parents: {} };
      const seed = (saver: BaseCheckpointSaver, thread: string) =>
        saver.put(configOf(thread), checkpointWith(messages, 1), seeded, { messages: 1 });
      const [bareRead, wrappedRead, controlRead] = [
        await seed(bare, `read-${sizes}`),
        await seed(wrapped, `read-${sizes}-w`),
        await seed(bare, `read-${sizes}-c`),
      ];
      const reads = await compareAsync(
        [
          { name: "bare", fn: () => bare.getTuple(bareRead) },
          { name: "wrapped", fn: () => wrapped.getTuple(wrappedRead) },
          { name: "control", fn: () => bare.getTuple(controlRead) },
        ],
        { rounds: 11, iterations: 3 },
      );
      lines.push(row(sizes, "getTuple", reads));
      // A run's first read: on PostgreSQL the wrapper first asks the store whether a lock of the thread is held.
      const first = (saver: BaseCheckpointSaver, config: object) => () =>
        saver.getTuple({ ...config, signal: new AbortController().signal });
      const firstReads = await compareAsync(
        [
          { name: "bare", fn: first(bare, bareRead) },
          { name: "wrapped", fn: first(wrapped, wrappedRead) },
          { name: "control", fn: first(bare, controlRead) },
        ],
        { rounds: 11, iterations: 3 },
      );
      lines.push(row(sizes, "getTuple, a run's first", firstReads));
      let n = 2;
      // Each write names the previous one as its parent, as a run's writes do.
      const put = (saver: BaseCheckpointSaver, thread: string) => {
        let parent = configOf(thread) as { configurable: Record<string, unknown> };
        const run = new AbortController().signal;
        return async () => {
          const version = n++;
          const metadata = { source: "loop" as const, step: version, parents: {} };
          const stored = await saver.put({ ...parent, signal: run }, checkpointWith(messages, version), metadata, {
            messages: version,
          });
          parent = stored as typeof parent;
          return parent;
        };
      };
      const writes = await compareAsync(
        [
          { name: "bare", fn: put(bare, `write-${sizes}`) },
          { name: "wrapped", fn: put(wrapped, `write-${sizes}-w`) },
          { name: "control", fn: put(bare, `write-${sizes}-c`) },
        ],
        { rounds: 11, iterations: 3 },
      );
      lines.push(row(sizes, "put", writes));
    }
  } finally {
    await handle.dispose();
  }
  return lines;
}
