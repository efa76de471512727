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

type Configurable = { thread_id?: unknown; checkpoint_ns?: unknown; checkpoint_id?: unknown };
/** The thread, namespace and checkpoint a saver's config names. */
export const configurableOf = (config: RunnableConfig): Configurable => (config.configurable ?? {}) as Configurable;

/** A thread and namespace, as a key. */
export function threadKey(config: RunnableConfig): string {
  const { thread_id, checkpoint_ns } = configurableOf(config);
  return `${String(thread_id)}\u0000${typeof checkpoint_ns === "string" ? checkpoint_ns : ""}`;
}

/** A checkpoint of a thread (the one the config names, or `id`), as a key. */
export const checkpointKey = (config: RunnableConfig, id = configurableOf(config).checkpoint_id) =>
  `${threadKey(config)}\u0000${String(id)}`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * An id that sorts right after `parent` and before any uuid6 with a later timestamp: the parent's timestamp,
 * its low 62 bits (clock sequence and node) plus a random step. Undefined when `parent` is no uuid or the step
 * would carry over into the variant bits.
 */
export function idRightAfter(parent: string): string | undefined {
  if (!UUID.test(parent)) return undefined;
  const low = BigInt(`0x${parent.slice(19).replace("-", "")}`);
  const next = low + 1n + BigInt(Math.floor(Math.random() * 2 ** 32));
  if (next >> 62n !== low >> 62n) return undefined;
  const tail = next.toString(16).padStart(16, "0");
  return `${parent.slice(0, 18).toLowerCase()}-${tail.slice(0, 4)}-${tail.slice(4)}`;
}

/** When a uuid6 was made, in Unix milliseconds (100-ns intervals from 1582-10-15); undefined for another id. */
function createdAt(id: string): number | undefined {
  if (!UUID.test(id) || id[14] !== "6") return undefined;
  const hex = id.replace(/-/g, "");
  const intervals = BigInt(`0x${hex.slice(0, 12)}${hex.slice(13, 16)}`);
  return Number((intervals - 0x01b21dd213814000n) / 10_000n);
}

type Saver = Pick<BaseCheckpointSaver, "getTuple" | "get" | "put" | "putWrites">;

type Query = (text: string, values: unknown[]) => Promise<{ rows: { free?: boolean }[] }>;
type Client = {
  query: Query;
  connect(): Promise<unknown>;
  end(): Promise<void>;
  on(event: "error", f: () => void): void;
};
type Pool = { query: Query; Client?: new (options: unknown) => Client; options?: unknown };
const SPACE = 0x4c475452;
const LOCK = (f: string) => `SELECT pg_${f}(${SPACE}, hashtext($1)) AS free`;

/**
 * Across processes, on a PostgreSQL saver (its node-postgres pool, `saver.pool`): an aborted run holds its thread's
 * advisory lock in shared mode from its abort until it has gone quiet, on a connection of its own (opened at a
 * run's first read, closed after a second unused, so an abort never waits for a busy pool); a run's first read
 * waits until no process holds it (a try of the lock in exclusive mode for one statement: one query, never a wait
 * inside the server, so no deadlock). Undefined for any other saver.
 */
function storeOrder(saver: object) {
  const { pool, options } = saver as { pool?: Pool; options?: { schema?: unknown } };
  const Connection = pool?.Client;
  if (typeof pool?.query !== "function" || typeof Connection !== "function") return;
  const key = (thread: string) => [`${String(options?.schema)}/${thread}`];
  let client: Promise<Client> | undefined;
  let holds = 0;
  const idle = setTimeout(() => {
    if (holds > 0 || !client) return idle.refresh();
    void client.then((c) => c.end()).catch(() => {});
    client = undefined;
  }, 1000).unref();
  const connection = () => {
    idle.refresh();
    if (client) return client;
    const c = new Connection(pool.options);
    c.on("error", () => void (client = undefined));
    const connecting = c.connect().then(() => c);
    connecting.catch(() => void (client === connecting && (client = undefined)));
    return (client = connecting);
  };
  return {
    /** Holds the thread's lock (shared) until `until` resolves. */
    hold(thread: string, until: Promise<void>) {
      holds++;
      const held = connection();
      void Promise.all([held.then((c) => c.query(LOCK("advisory_lock_shared"), key(thread))), until])
        .then(() => held.then((c) => c.query(LOCK("advisory_unlock_shared"), key(thread))))
        .catch(() => {})
        .finally(() => holds--);
    },
    /** Resolves once no aborted run of the thread holds its lock, in any process (at most {@link MAX_WAIT_MS}). */
    async free(thread: string) {
      void connection();
      for (let delay = 1, waited = 0; waited < MAX_WAIT_MS; waited += delay, delay = Math.min(2 * delay, 50)) {
        const answer = await pool.query(LOCK("try_advisory_xact_lock"), key(thread)).catch(() => undefined);
        if (answer?.rows[0]?.free !== false) return;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    },
  };
}
/** The longest a run's first read waits for an aborted run in another process. */
const MAX_WAIT_MS = 30_000;

/** A run (its abort signal), its thread, its operations under way; once aborted, when, and when it went quiet. */
interface Run {
  thread: string;
  inFlight: number;
  idle: (() => void)[];
  abortedAt?: number;
  quiet?: Promise<void>;
}

/**
 * The saver methods a wrapper exposes, in thread order: `outer`'s reads and `put` (the repairing ones), the inner
 * saver's `putWrites`, each counted as under way for its run; a run's first read first waits for aborted runs.
 */
export function orderedSaverMethods(inner: Saver, outer: Pick<Saver, "getTuple" | "get" | "put">): Saver {
  const runs = new WeakMap<AbortSignal, Run>();
  /** Per thread: its aborted runs not yet quiet. */
  const aborted = new Map<string, Set<Run>>();
  /** Checkpoints of aborted runs stored under another id (thread, namespace and the id LangGraph gave it). */
  const moved = new Map<string, string>();
  const store = storeOrder(inner);

  /** From its abort, a run counts as aborted on its thread until it has been quiet for {@link QUIET_TURNS} turns. */
  function abort(run: Run, at: number) {
    run.abortedAt = at;
    let set = aborted.get(run.thread);
    if (!set) aborted.set(run.thread, (set = new Set()));
    set.add(run);
    run.quiet = (async () => {
      for (let quiet = 0; quiet <= QUIET_TURNS; quiet++) {
        if (run.inFlight > 0) quiet = -1;
        await (quiet < 0 ? new Promise<void>((resolve) => run.idle.push(resolve)) : nextTurn());
      }
      set.delete(run);
      if (set.size === 0 && aborted.get(run.thread) === set) aborted.delete(run.thread);
    })();
    store?.hold(run.thread, run.quiet);
  }

  /** The run of `config` (first seen: registered, with its thread), or undefined outside a run. */
  function runOf(config: RunnableConfig): Run | undefined {
    const { signal } = config;
    if (!signal) return undefined;
    let run = runs.get(signal);
    if (!run) {
      runs.set(signal, (run = { thread: String(configurableOf(config).thread_id), inFlight: 0, idle: [] }));
      const r = run;
      if (signal.aborted) abort(r, 0);
      else signal.addEventListener("abort", () => abort(r, Date.now()), { once: true });
    }
    return run;
  }

  /** `op` counted as under way for the run of `config`, until it settles. */
  function track<T>(config: RunnableConfig, op: () => Promise<T>): Promise<T> {
    const run = runOf(config);
    if (!run) return op();
    run.inFlight++;
    const settle = () => {
      if (--run.inFlight === 0) for (const wake of run.idle.splice(0)) wake();
    };
    try {
      return op().finally(settle);
    } catch (error) {
      settle();
      throw error;
    }
  }

  /**
   * A read, counted as under way for its run; a read of the head by a live run (as every run starts) first waits
   * until the thread's other aborted runs have gone quiet, here and in other processes. An addressed read is
   * history; an aborted run's reads are stale anyway; a read outside any run (getState, an onRepair handler) never
   * waits. No await in this process when there is nothing to wait for.
   */
  const read =
    <T>(method: (config: RunnableConfig) => Promise<T>) =>
    (config: RunnableConfig): Promise<T> => {
      const run = runOf(config);
      const op = () => track(config, () => method(config));
      if (configurableOf(config).checkpoint_id !== undefined || !run || run.abortedAt !== undefined) return op();
      const others = () => [...(aborted.get(run.thread) ?? [])].filter((other) => other !== run);
      if (!store && others().length === 0) return op();
      return (async () => {
        for (let waiting = others(); waiting.length > 0; waiting = others())
          await Promise.all(waiting.map((o) => o.quiet));
        // A run holding the lock itself asks for other processes' holds.
        await store?.free(run.thread);
      })().then(op);
    };

  /** The config of a write that names a checkpoint stored under another id, naming that id. */
  const addressed = (config: RunnableConfig): RunnableConfig => {
    const id = moved.size > 0 ? moved.get(checkpointKey(config)) : undefined;
    return id === undefined ? config : { ...config, configurable: { ...config.configurable, checkpoint_id: id } };
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
      for (const [ns, id] of moved.size > 0 ? Object.entries(parents ?? {}) : []) {
        const to = moved.get(checkpointKey({ configurable: { ...config.configurable, checkpoint_ns: ns } }, id));
        if (to !== undefined) parents = { ...parents, [ns]: to };
      }
      const c = addressed(config);
      const abortedAt = config.signal?.aborted ? runOf(config)?.abortedAt : undefined;
      const created = abortedAt === undefined ? undefined : createdAt(checkpoint.id);
      const parent = configurableOf(c).checkpoint_id;
      // No parent: an id before every uuid6 a saver holds (timestamp zero).
      const id =
        created !== undefined && created >= abortedAt!
          ? idRightAfter(typeof parent === "string" ? parent : "00000000-0000-6000-8000-000000000000")
          : undefined;
      if (id !== undefined) {
        evictOldest(moved);
        moved.set(checkpointKey(config, checkpoint.id), id);
      }
      const m = parents === metadata?.parents ? metadata : { ...metadata, parents };
      return track(config, () => outer.put(c, id === undefined ? checkpoint : { ...checkpoint, id }, m, newVersions));
    },
    putWrites: (config, ...rest) => {
      const c = addressed(config);
      return track(config, () => inner.putWrites(c, ...rest));
    },
  };
}
