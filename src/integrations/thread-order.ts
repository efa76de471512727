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
 * Three rules, all keyed on the run's own `config.signal` (LangGraph hands every read and write of a run the
 * run's config; a run that cannot be aborted has no late writes: its promise settles after them):
 * - Reads (this process): a run's read of its thread's head waits while another run of the thread that was
 *   aborted still has reads or writes under way, and until it has been quiet for a few turns of the event loop
 *   (its loop issues its next write within microtasks of the last one settling). A run's first read waits so
 *   even when the run is aborted already, for the aborted runs first seen before it.
 * - Reads (every process, PostgreSQL): an aborted run holds an advisory lock of its thread until it is quiet, and
 *   a run's first read waits until nobody holds one, or, once the run is aborted, one of a run seen before it (see
 *   `storeOrder`).
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
/** How long, beyond those turns, an aborted run must stay quiet before it stops holding its thread in the store. */
const QUIET_MS = 25;
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

type Run = { abortedAt: number; at: number };

type Saver = Pick<BaseCheckpointSaver, "getTuple" | "get" | "put" | "putWrites">;

type Client = {
  query(text: string, values?: unknown[]): Promise<{ rows: { free?: boolean }[] }>;
  connect(): Promise<unknown>;
  end(): unknown;
  on(event: string, f: () => void): void;
  connection?: { stream?: { unref?(): void } };
};

type Pool = Pick<Client, "query"> & { Client: new (options: unknown) => Client; options?: object; ending?: boolean };

/**
 * A connection of the pool's own that only takes and releases locks (so a lock sent from an abort listener never
 * waits for a client of the pool): opened now, again after an error, closed once the pool is, never keeping the
 * process alive; a query on it sent within the same turn of the event loop when it is open.
 */
function lockConnection(pool: Pool) {
  let connecting: Promise<Client | undefined> | undefined;
  const open = () => {
    // Pipelined (node-postgres 8.23 and later): a lock goes on the wire at once, never queued behind another query.
    const c = new pool.Client({ ...pool.options, pipeline: true });
    c.on("error", () => void (connecting = undefined));
    return (connecting = c.connect().then(
      () => (c.connection?.stream?.unref?.(), c),
      () => (connecting = undefined),
    ));
  };
  open();
  const watch = setInterval(() => {
    if (pool.ending) clearInterval(watch), connecting?.then((c) => c?.end()).catch(() => {});
  }, 1000).unref();
  // With no query: resolves once the connection is open (or failed).
  return (sql?: string, values?: unknown[]) => (connecting ?? open()).then((c) => (sql ? c?.query(sql, values) : null));
}

/** The lock connection of each pool (one however many savers and wrappers use it). */
const lockConnections = new WeakMap<Pool, ReturnType<typeof lockConnection>>();

/**
 * Across processes, on a PostgreSQL saver (its node-postgres pool, `saver.pool`): an aborted run holds a lock of its
 * thread (shared, keyed by the thread and the time the run was first seen) from its abort until it is quiet, sent
 * on the pool's lock connection from the abort listener itself, so it reaches the server before `invoke()` rejects
 * and the application can start the next run; and a run's first read waits until nobody holds one (a query of
 * `pg_locks` through the pool). A run aborted while that read waits waits only for the locks of runs seen before
 * it: the next turn's run, aborted too, holds one while it waits for this run, and each would wait for the other.
 * A hold lasts while its own run, or another aborted run of the thread that is not waiting so, has something under
 * way. So an aborted run only ever waits for runs seen before it (in a process, seen-order and time agree), a hold
 * only for runs that do not wait, and nothing waits for a live run: no circle of waits.
 * Undefined for any other saver.
 */
function storeOrder(saver: object) {
  const { pool, options } = saver as { pool?: Pool; options?: { schema?: unknown } };
  if (typeof pool?.Client !== "function") return;
  const locks = lockConnections.get(pool) ?? lockConnection(pool);
  lockConnections.set(pool, locks);
  const key = (thread: string) => `${options?.schema}/${thread}`;
  /** A run's lock time: its whole ms, modulo 2^32. */
  const time = (run: Run) => Math.floor(run.at) % 2 ** 32;
  const lock = (sql: string, thread: string, run: Run) =>
    locks(`SELECT pg_advisory_${sql}_shared(hashtext($1)::int8 << 32 | $2)`, [key(thread), time(run)]);
  return {
    /** Holds the thread's lock of `run`'s time (shared) until `until` resolves. */
    hold: (thread: string, run: Run, until: Promise<void>) =>
      void Promise.all([lock("lock", thread, run), until])
        .then(() => lock("unlock", thread, run))
        .catch(() => {}),
    /**
     * Resolves once the lock connection is open (so that an abort from then on is held at once) and nobody holds a
     * lock of the thread (once `run` is aborted: one of a run seen before it), or after 30 s (polled every 5 ms;
     * whether `run` is aborted read at each poll).
     */
    async free(thread: string, run: Run) {
      await locks();
      for (let waited = 0; waited < 30_000; waited += 5) {
        const answer = await pool
          .query(
            // A bigint advisory lock (objsubid 1; no other lock has a classid outside the system catalogs' few oids):
            // its high half the thread, its low half its time, older than $2 when the difference modulo 2^32 is below
            // 2^31.
            `SELECT NOT EXISTS (SELECT FROM pg_locks WHERE classid = hashtext($1)::oid AND objsubid = 1 AND granted ` +
              `AND ($2::int8 IS NULL OR ($2 - objid::int8) << 32 > 0)) AS free`,
            [key(thread), run.abortedAt < Infinity ? time(run) : null],
          )
          .catch(() => null);
        if (answer?.rows[0]?.free !== false) return;
        await sleep(5);
      }
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The saver methods a wrapper exposes, in thread order: `outer`'s reads and `put` (the repairing ones), the inner
 * saver's `putWrites`, each counted as under way for its run; a head read first waits for aborted runs.
 */
export function orderedSaverMethods(inner: Saver, outer: Omit<Saver, "putWrites">): Saver {
  type Entry = {
    runs: Map<AbortSignal, { inFlight: number }>;
    waiters: (() => void)[];
    abortedOps: number;
    /**
     * The time of a run of the thread first seen aborted: right after the last abort's (half a thousandth of a ms:
     * above a double's step at today's times, below the step between runs seen one after the other).
     */
    at?: number;
  };
  /**
   * Per thread: its runs with operations under way (how many), or aborted and not yet seen quiet; who waits for
   * them to settle; and how many operations aborted runs have begun.
   */
  const threads = new Map<string, Entry>();
  /**
   * Each run seen: when (Unix ms, a thousandth more than the run seen before it when the clock has not moved on
   * since: in a process the runs' order; its whole ms modulo 2^32 is its lock's time in the store), and when it was
   * aborted (Unix ms; 0 for a run first seen aborted, when is unknown; Infinity while live).
   */
  const seen = new WeakMap<AbortSignal, Run>();
  let last = 0;
  /** Runs whose read waits for other runs (in memory or in the store). */
  const waiting = new Set<AbortSignal>();
  /** Checkpoints of aborted runs stored under another id (thread, namespace and the id LangGraph gave it). */
  const moved = new Map<string, string>();
  const store = storeOrder(inner);

  /** The thread's entry, made when missing. */
  function entryOf(thread: string) {
    let entry = threads.get(thread);
    if (!entry) {
      // Forgets the oldest thread that has nothing under way and nobody waiting (aborted runs no read came for).
      if (threads.size >= MAX_TRACKED)
        for (const [key, { runs, waiters }] of threads)
          if (!waiters.length && [...runs.values()].every((run) => !run.inFlight)) {
            threads.delete(key);
            break;
          }
      threads.set(thread, (entry = { runs: new Map(), waiters: [], abortedOps: 0 }));
    }
    return entry;
  }

  /**
   * A run (its signal) first seen: noted, with the time of its abort when it comes. Once aborted it counts as a run
   * of its thread not yet seen quiet, and holds its thread in the store for the reads of later runs until it is
   * (see `quiet`). True the first time.
   */
  function register(signal: AbortSignal, thread: string) {
    if (seen.has(signal)) return false;
    // A run first seen aborted comes right after its thread's last abort here, within its ms (`Entry.at`):
    // createAgent runs its loop with a second signal, first seen after the abort of the one it read the thread
    // with, maybe once the next turn began elsewhere.
    const run = {
      abortedAt: signal.aborted ? 0 : Infinity,
      at: (signal.aborted && threads.get(thread)?.at) || (last = Math.max(last + 1e-3, Date.now())),
    };
    seen.set(signal, run);
    const aborted = () => {
      const entry = entryOf(thread);
      entry.at = run.at + 5e-4;
      entry.runs.set(signal, entry.runs.get(signal) ?? { inFlight: 0 });
      // Not for another run while a read of it waits (in memory or in the store): it may wait for this very lock.
      store?.hold(
        thread,
        run,
        quiet(thread, (other) => other === signal || !waiting.has(other)),
      );
    };
    if (signal.aborted) aborted();
    else signal.addEventListener("abort", () => ((run.abortedAt = Date.now()), aborted()), { once: true });
    return true;
  }

  /**
   * Resolves once the thread's aborted runs that `pick` picks have had nothing under way for {@link QUIET_TURNS}
   * turns of the event loop and {@link QUIET_MS} besides, with no operation begun by any aborted run meanwhile (a
   * run may read with one signal and run its loop with another: createAgent); forgets them then.
   */
  async function quiet(thread: string, pick: (signal: AbortSignal) => boolean) {
    for (let turns = 0, ops = -1; ; ) {
      const entry = threads.get(thread);
      const aborted = [...(entry?.runs ?? [])].filter(([signal]) => signal.aborted && pick(signal));
      if (!entry || !aborted.length) return;
      if (aborted.some(([, run]) => run.inFlight)) {
        turns = 0;
        ops = -1;
        await new Promise<void>((resolve) => entry.waiters.push(resolve));
      } else if (turns++ < QUIET_TURNS) await nextTurn();
      else if (ops !== entry.abortedOps) {
        ops = entry.abortedOps;
        await sleep(QUIET_MS);
      } else {
        // The entry itself stays (forgotten with the thread's last operation, or as the oldest when over the limit).
        for (const [signal] of aborted) entry.runs.delete(signal);
        return;
      }
    }
  }

  /** `op` counted as under way for the run of `config` on its thread, until it settles. */
  function track<T>(config: RunnableConfig, op: () => Promise<T>) {
    const { signal } = config;
    if (!signal) return op();
    const thread = String(configurableOf(config).thread_id);
    register(signal, thread);
    const entry = entryOf(thread);
    const run = entry.runs.get(signal) ?? { inFlight: 0 };
    entry.runs.set(signal, run);
    run.inFlight++;
    if (signal.aborted) entry.abortedOps++;
    const settle = () => {
      // A live run is forgotten between operations; an aborted one is kept until it has been seen quiet.
      if (!--run.inFlight && !signal.aborted) entry.runs.delete(signal);
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
   * A read, counted as under way for its run. A read of the head by a live run, and a run's first read, first wait
   * until the thread's other aborted runs are quiet (see `quiet`; an aborted run only for runs first seen before it,
   * so two never wait for each other), and a run's first read on PostgreSQL until no lock of the thread is held (see
   * `storeOrder`). An addressed read is history, an aborted run's later reads are stale anyway, and a read outside
   * any run (getState, an onRepair handler during an aborted run's put) never waits. No await at all when there is
   * nothing to wait for.
   */
  const read =
    <T>(method: (config: RunnableConfig) => Promise<T>) =>
    (config: RunnableConfig) => {
      const { thread_id, checkpoint_id } = configurableOf(config);
      const thread = String(thread_id);
      const mine = config.signal;
      // Every run starts with a read of its head.
      const first = mine && register(mine, thread);
      const head = checkpoint_id === undefined && mine && (first || !mine.aborted);
      const other = (signal: AbortSignal) =>
        signal !== mine && (!mine!.aborted || seen.get(signal)!.at < seen.get(mine!)!.at);
      const ask = head && first && store;
      const runs = (head && threads.get(thread)?.runs) || [];
      if (!ask && ![...runs].some(([signal]) => signal.aborted && other(signal)))
        return track(config, () => method(config));
      // Counted as under way while it waits: this process's next run waits for it, and its hold lasts.
      return track(config, async () => {
        waiting.add(mine!);
        await quiet(thread, other);
        if (ask) await store.free(thread, seen.get(mine)!);
        waiting.delete(mine!);
        return method(config);
      });
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
        created !== undefined && created >= (seen.get(config.signal!)?.abortedAt ?? 0)
          ? idRightAfter(typeof parent === "string" ? parent : "00000000-0000-6000-8000-000000000000")
          : undefined;
      if (id) evictOldest(moved).set(checkpointKey(config, checkpoint.id), id);
      const m = parents === metadata?.parents ? metadata : { ...metadata, parents };
      return track(config, () => outer.put(c, id ? { ...checkpoint, id } : checkpoint, m, newVersions));
    },
    putWrites: (config, ...rest) => track(config, () => inner.putWrites(addressed(config), ...rest)),
  };
}
