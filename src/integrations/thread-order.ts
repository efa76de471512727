/**
 * No lost update: a write of an aborted run never becomes the head of its thread over a newer turn.
 *
 * An aborted `invoke()` / `stream()` rejects as soon as its signal fires, while LangGraph's loop goes on writing
 * the run's last checkpoints and pending writes (with `durability: "exit"` its only write; with `"async"` the
 * puts still queued; after an abort before the first step, its input checkpoint). A run started right after
 * the rejection reads the thread without them: a resume fails (`Received no input writes for "__start__"`), a
 * new input starts from an older checkpoint and the aborted run's user message and finished results drop out.
 * And a late checkpoint created after the next run's (an abort before the first step) would become the head
 * (savers take the highest `checkpoint_id`, a uuid6 that grows with time) and bury the newer turn.
 *
 * Two rules, both keyed on the run's own `config.signal` (LangGraph hands every read and write of a run the
 * run's config; a run that cannot be aborted has no late writes: its promise settles after them):
 * - Reads (this process): a run's read of its thread's head waits while another run of the thread that was
 *   aborted still has reads or writes under way, and until it has been quiet for a few turns of the event loop
 *   (its loop issues its next write within microtasks of the last one settling).
 * - Writes (every process, no extra query): a checkpoint that an aborted run created after its abort (its
 *   uuid6 says when) is stored with an id right after its parent's (the same timestamp, a random step in the
 *   low bits), or before every id when it has no parent. It stays the head when nothing was written after its
 *   parent, and lands as a branch under any checkpoint created later, whichever process wrote it. The run's
 *   later writes that name the original id are sent to the new one. A checkpoint created before the abort
 *   keeps its id: it is older than anything a run started after the abort creates, and the pending writes
 *   of its tasks, issued before it is stored with `durability: "async"`, name it.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { nextTurn } from "../threads/concurrent";
import { evictOldest } from "./events";

/** Turns of the event loop an aborted run must stay quiet before a read goes ahead without it. */
const QUIET_TURNS = 5;
/** Ids and threads remembered per process (the oldest are forgotten first). */
const MAX_TRACKED = 1000;

/** The thread, namespace and checkpoint a saver's config names. */
export const configurableOf = (config: RunnableConfig) => (config.configurable ?? {}) as Record<string, unknown>;

/** A thread and namespace, as a key. */
export function threadKey(config: RunnableConfig) {
  const { thread_id, checkpoint_ns } = configurableOf(config);
  return `${String(thread_id)}\0${typeof checkpoint_ns === "string" ? checkpoint_ns : ""}`;
}

/** A checkpoint of a thread (the one the config names, or `id`), as a key. */
export const checkpointKey = (config: RunnableConfig, id = configurableOf(config).checkpoint_id) =>
  `${threadKey(config)}\0${String(id)}`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An id that sorts right after `parent` and before any uuid6 with a later timestamp: the parent's timestamp,
 * its low 62 bits (clock sequence and node) plus a random step. Undefined when `parent` is no uuid or the step
 * would carry over into the variant bits.
 */
export function idRightAfter(parent: string) {
  if (!UUID.test(parent)) return;
  const low = BigInt(`0x${parent.slice(19).replace("-", "")}`);
  const next = low + 1n + BigInt(Math.floor(Math.random() * 2 ** 32));
  if (next >> 62n !== low >> 62n) return;
  const tail = next.toString(16).padStart(16, "0");
  return `${parent.slice(0, 18).toLowerCase()}-${tail.slice(0, 4)}-${tail.slice(4)}`;
}

/** When a uuid6 was made, in Unix milliseconds (100-ns intervals from 1582-10-15); undefined for another id. */
function createdAt(id: string) {
  if (!UUID.test(id) || id[14] !== "6") return;
  const hex = id.replace(/-/g, "");
  const intervals = BigInt(`0x${hex.slice(0, 12)}${hex.slice(13, 16)}`);
  return Number((intervals - 0x01b21dd213814000n) / 10_000n);
}

type Saver = Pick<BaseCheckpointSaver, "getTuple" | "get" | "put" | "putWrites">;

/**
 * The saver methods a wrapper exposes, in thread order: `outer`'s reads and `put` (the repairing ones), the inner
 * saver's `putWrites`, each counted as under way for its run; a head read first waits for aborted runs.
 */
export function orderedSaverMethods(inner: Saver, outer: Omit<Saver, "putWrites">): Saver {
  /**
   * Per thread: its runs with operations under way (how many), or aborted and not yet seen quiet; and who waits
   * for them to settle.
   */
  const threads = new Map<string, { runs: Map<AbortSignal, { inFlight: number }>; waiters: (() => void)[] }>();
  /** When each run seen live was aborted (Unix ms); 0 for a run first seen aborted (when is unknown). */
  const abortedAt = new WeakMap<AbortSignal, number>();
  /** Checkpoints of aborted runs stored under another id (thread, namespace and the id LangGraph gave it). */
  const moved = new Map<string, string>();

  /** `op` counted as under way for the run of `config` on its thread, until it settles. */
  function track<T>(config: RunnableConfig, op: () => Promise<T>) {
    const { signal } = config;
    if (!signal) return op();
    if (!abortedAt.has(signal)) {
      abortedAt.set(signal, signal.aborted ? 0 : Infinity);
      if (!signal.aborted) signal.addEventListener("abort", () => abortedAt.set(signal, Date.now()), { once: true });
    }
    const thread = String(configurableOf(config).thread_id);
    let entry = threads.get(thread);
    if (!entry) {
      // Forgets the oldest thread that has nothing under way and nobody waiting (aborted runs no read came for).
      if (threads.size >= MAX_TRACKED)
        for (const [key, { runs, waiters }] of threads)
          if (!waiters.length && [...runs.values()].every((run) => run.inFlight === 0)) {
            threads.delete(key);
            break;
          }
      threads.set(thread, (entry = { runs: new Map(), waiters: [] }));
    }
    const run = entry.runs.get(signal) ?? { inFlight: 0 };
    entry.runs.set(signal, run);
    run.inFlight++;
    const settle = () => {
      // A live run is forgotten between operations; an aborted one is kept until a read has seen it quiet.
      if (--run.inFlight === 0 && !signal.aborted) entry.runs.delete(signal);
      if (!entry.runs.size && !entry.waiters.length) threads.delete(thread);
      for (const wake of entry.waiters.splice(0)) wake();
    };
    try {
      return op().finally(settle);
    } catch (error) {
      settle();
      throw error;
    }
  }

  /**
   * A read, counted as under way for its run; a read of the head by a live run first waits until no other aborted
   * run of the thread has anything under way and it has stayed quiet for {@link QUIET_TURNS} turns of the event
   * loop (an addressed read is history; an aborted run's reads are stale anyway, and two of them would wait for
   * each other; a read outside any run, getState or an onRepair handler during an aborted run's put, never
   * waits). No await at all when there is nothing to wait for.
   */
  const read =
    <T>(method: (config: RunnableConfig) => Promise<T>) =>
    (config: RunnableConfig) => {
      const run = () => track(config, () => method(config));
      const { thread_id, checkpoint_id } = configurableOf(config);
      const mine = config.signal;
      const entry = checkpoint_id === undefined && mine && !mine.aborted ? threads.get(String(thread_id)) : undefined;
      const others = () => [...entry!.runs].filter(([signal]) => signal !== mine && signal.aborted);
      if (!entry || !others().length) return run();
      return (async () => {
        for (let quiet = 0; ; ) {
          const aborted = others();
          if (!aborted.length) return;
          if (aborted.some(([, op]) => op.inFlight > 0)) {
            quiet = 0;
            await new Promise<void>((resolve) => entry.waiters.push(resolve));
          } else if (++quiet > QUIET_TURNS) {
            for (const [signal] of aborted) entry.runs.delete(signal);
            if (!entry.runs.size && !entry.waiters.length) threads.delete(String(thread_id));
            return;
          } else await nextTurn();
        }
      })().then(run);
    };

  /** The config of a write that names a checkpoint stored under another id, naming that id. */
  const addressed = (config: RunnableConfig) => {
    const id = moved.size ? moved.get(checkpointKey(config)) : undefined;
    return id ? { ...config, configurable: { ...config.configurable, checkpoint_id: id } } : config;
  };

  return {
    getTuple: read(outer.getTuple),
    get: read(outer.get),
    /**
     * The put as it is stored: a checkpoint an aborted run created after its abort gets an id right after its
     * parent's (see the module comment), and a parent stored under another id is named by it.
     */
    put: (config, checkpoint, metadata, newVersions) => {
      // A subgraph's checkpoint names its parent graph's checkpoints (namespace to id).
      let parents = metadata?.parents;
      for (const [ns, id] of moved.size ? Object.entries(parents ?? {}) : []) {
        const to = moved.get(checkpointKey({ configurable: { ...config.configurable, checkpoint_ns: ns } }, id));
        if (to) parents = { ...parents, [ns]: to };
      }
      const c = addressed(config);
      const created = config.signal?.aborted ? createdAt(checkpoint.id) : undefined;
      const parent = configurableOf(c).checkpoint_id;
      // No parent: an id before every uuid6 a saver holds (timestamp zero).
      const id =
        created !== undefined && created >= (abortedAt.get(config.signal!) ?? 0)
          ? idRightAfter(typeof parent === "string" ? parent : "00000000-0000-6000-8000-000000000000")
          : undefined;
      if (id) {
        evictOldest(moved);
        moved.set(checkpointKey(config, checkpoint.id), id);
      }
      const m = parents === metadata?.parents ? metadata : { ...metadata, parents };
      return track(config, () => outer.put(c, id ? { ...checkpoint, id } : checkpoint, m, newVersions));
    },
    putWrites: (config, ...rest) => track(config, () => inner.putWrites(addressed(config), ...rest)),
  };
}
