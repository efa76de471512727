/**
 * Where the threads of a saver come from, one at a time, without loading the database.
 *
 * `saver.list({})` is the only portable way to see every thread, but it yields EVERY checkpoint of every
 * thread fully deserialized, and the official SQLite and PostgreSQL savers build that list in memory
 * (`.all()`, one `pool.query`). For those two the source reads their tables itself, one query per page of
 * threads in primary-key order (thread, namespace): each thread's latest checkpoint id and the serialized
 * bytes its messages are in (PostgreSQL: the messages channel's blob, as `bytea`; SQLite: the checkpoint).
 * The pre-check (precheck.ts) reads those bytes as the saver's serializer would before reviving them; a
 * thread it finds clean is reported from that, any other is revived from the same bytes by the saver's own
 * serializer (scan.ts `pageTuple`; `getTuple` when they do not revive), so what the engine judges is what the
 * saver revives. Any other saver is read through `list({})`, keeping the
 * first tuple of each thread and namespace (savers list newest first), with a set of the keys seen so far.
 *
 * A shard (`{ index, count }`) is the threads whose id hashes to `index` (from 1) of `count`: the first 32 bits
 * of the MD5 of the id, modulo `count`, plus 1. PostgreSQL computes it in SQL and SQLite in a function of the
 * connection, so each process reads only its share of the keys; a `list({})` source filters what it reads.
 */
import { createHash } from "node:crypto";
import * as checkpointPackage from "@langchain/langgraph-checkpoint";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { Provider } from "../types";
import type { Dict } from "../values";
import { cleanStoredThread, type CleanThread, type StoredCheckpoint } from "./precheck";

export interface ThreadKey {
  threadId: string;
  /** `checkpoint_ns`: `""` for the graph itself, `"node:task-id"` for a subgraph with its own checkpoints. */
  namespace: string;
}

/** One thread to read: its key, and its latest tuple when the source already decoded it. */
export interface ThreadItem {
  key: ThreadKey;
  tuple?: CheckpointTuple;
  /** The source could not decode this thread (its tuple is missing). */
  error?: unknown;
  /** The pre-check found the latest checkpoint's messages clean: nothing to revive. */
  clean?: CleanThread;
  /** The page's bytes of a thread the pre-check could not call clean (saver's JSON serializer only): revived from them. */
  stored?: StoredCheckpoint;
}

export const configOf = (key: ThreadKey, checkpoint_id?: string) => ({
  configurable: { thread_id: key.threadId, checkpoint_ns: key.namespace, ...(checkpoint_id && { checkpoint_id }) },
});

/** Threads whose id hashes to `index` (1 to `count`) of `count` shards. */
export interface Shard {
  index: number;
  count: number;
}

interface ThreadSelection {
  threads?: readonly string[];
  since?: Date;
  shard?: Shard;
  messagesKey?: string;
  provider?: Provider;
}

/** Threads per page: enough to keep round trips rare, small enough that memory does not depend on the store. */
export const PAGE_SIZE = 500;

/**
 * The smallest checkpoint id written at or after `since`. LangGraph's checkpoint ids are UUIDv6: the first 15
 * hex digits are the time in 100 ns steps since 1582-10-15, most significant first, so ids sort by time.
 */
export function checkpointIdAt(since: Date) {
  const hex = (BigInt(+since) * 10_000n + 0x01b21dd213814000n).toString(16).padStart(15, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-6${hex.slice(12, 15)}-0000-000000000000`;
}

/** The first 32 bits of the MD5 of a thread id, unsigned: what its shard is computed from. */
const md5Head = (threadId: string) =>
  parseInt(createHash("md5").update(threadId, "utf8").digest("hex").slice(0, 8), 16);

/** The shard (1 to `count`) of a thread id: the same function as the SQL below. */
export const shardOf = (threadId: string, count: number) => (md5Head(threadId) % count) + 1;

const inShard = (threadId: string, shard?: Shard) => !shard || shardOf(threadId, shard.count) === shard.index;

// Read through the namespace: @langchain/langgraph-checkpoint 1.0.x does not export the class (a named import
// would fail to link there); without it, every saver keeps the generic path.
const jsonPlus = (checkpointPackage as { JsonPlusSerializer?: { prototype: object } }).JsonPlusSerializer;

/**
 * SqliteSaver (a better-sqlite3 connection in `db`) or PostgresSaver (a pg Pool in `pool`, its schema in
 * `options.schema`), read with SQL of our own; undefined for any other saver. `query` runs a statement built with
 * `add`, which numbers the placeholders as it adds their values. `found()`: whether the saver's tables are there
 * (a saver whose setup() never ran holds no threads, and reading must not create its tables).
 */
export function sqlStoreOf(saver: object) {
  const { db, pool, options } = saver as {
    db?: { prepare(sql: string): { all(...params: unknown[]): Dict[] }; function(...args: unknown[]): unknown };
    pool?: { query(text: string, values?: unknown[]): Promise<{ rows: Dict[] }> };
    options?: { schema?: string };
  };
  const sqlite = typeof db?.prepare === "function" && typeof db.function === "function";
  const postgres = !sqlite && typeof pool?.query === "function" && typeof options?.schema === "string";
  if (!sqlite && !postgres) return;
  const schema = postgres ? `"${options!.schema!.replace(/"/g, '""')}".` : "";
  const query = async (build: (add: (value: unknown) => string) => string) => {
    const values: unknown[] = [];
    const sql = build((value) => (values.push(value), postgres ? `$${values.length}` : "?"));
    return postgres ? (await pool!.query(sql, values)).rows : db!.prepare(sql).all(...values);
  };
  const found = async () => {
    const [row] = await query((add) =>
      postgres
        ? `SELECT to_regclass(${add(`${schema}checkpoints`)}) AS found`
        : "SELECT COUNT(*) = 3 AS found FROM pragma_table_info('checkpoints') " +
          "WHERE name IN ('thread_id', 'checkpoint_ns', 'checkpoint_id')",
    );
    return !!row?.found;
  };
  return { db: db!, postgres, schema, query, found };
}

/**
 * The SQL that selects the threads of `selection` (of one thread, after `after`) from the tables of `store`: `where`
 * and `having` of a `GROUP BY thread_id, checkpoint_ns` over the checkpoints, placeholders added in their order
 * (SQLite numbers them as they come). Only for the SQL stores: a saver read through `list({})` has no selection SQL.
 */
function selectionOf(store: NonNullable<ReturnType<typeof sqlStoreOf>>, selection: ThreadSelection) {
  const { db, postgres } = store;
  const { shard } = selection;
  const since = selection.since && checkpointIdAt(selection.since);
  // SQLite: a function of the connection gives the hash of a thread id; PostgreSQL computes it in SQL.
  if (shard && !postgres) db.function("lgtr_md5_head", { deterministic: true }, (id: unknown) => md5Head(String(id)));
  const hash = postgres
    ? "('x' || lpad(left(md5(thread_id), 8), 16, '0'))::bit(64)::bigint"
    : "lgtr_md5_head(thread_id)";
  return (add: (value: unknown) => string, after?: Dict, threads?: readonly (string | undefined)[]) => {
    const where = [
      after && `(thread_id, checkpoint_ns) > (${add(after.thread_id)}, ${add(after.checkpoint_ns)})`,
      threads?.[0] !== undefined && `thread_id IN (${threads.map(add).join(", ")})`,
      shard && `${hash} % ${add(shard.count)} + 1 = ${add(shard.index)}`,
    ].filter(Boolean);
    return `FROM ${store.schema}checkpoints ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
GROUP BY thread_id, checkpoint_ns ${since ? `HAVING MAX(checkpoint_id) >= ${add(since)}` : ""}`;
  };
}

/**
 * How many threads (thread and namespace) of `selection` a SQLite or PostgreSQL saver holds, in one count query
 * (a total for the progress line); undefined for any other saver, which cannot count without reading them all.
 */
export async function countThreads(saver: BaseCheckpointSaver, selection: ThreadSelection = {}) {
  const store = sqlStoreOf(saver);
  if (!store || !(await store.found())) return store && 0;
  const [row] = await store.query(
    (add) =>
      `SELECT COUNT(*) AS n FROM (SELECT thread_id ${selectionOf(store, selection)(add, undefined, selection.threads)}) t`,
  );
  return Number(row.n);
}

/**
 * The cheapest streaming enumeration this saver allows: SqliteSaver and PostgresSaver read in pages of their own,
 * each thread's latest checkpoint with its bytes; any other saver through `list({})`.
 */
export async function* threadSourceFor(
  saver: BaseCheckpointSaver,
  selection: ThreadSelection,
): AsyncGenerator<ThreadItem> {
  const store = sqlStoreOf(saver);
  if (!store) return yield* listSource(saver, selection);
  const { postgres, schema, query } = store;
  if (!(await store.found())) return;
  const { messagesKey, provider } = selection;
  const grouped = selectionOf(store, selection);
  // One page: the latest checkpoint of each of the next PAGE_SIZE threads (of the selection, of one thread, after
  // `after`), with its bytes: `type` and `data` (the checkpoint in SQLite; in PostgreSQL the blob of the messages
  // channel at the version the checkpoint names, as bytea: no array_agg, which pg parses char by char). The first
  // page has no lower bound (a thread id may be ""); later pages start after the last key.
  const page = (after?: Dict, thread?: string) =>
    query((add) => {
      const sql = `WITH page AS (SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id ${grouped(add, after, [thread])}
ORDER BY thread_id, checkpoint_ns LIMIT ${PAGE_SIZE}) SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id AS "checkpointId", `;
      const join = `FROM page p JOIN ${schema}checkpoints c USING (thread_id, checkpoint_ns, checkpoint_id)`;
      const order = "ORDER BY p.thread_id, p.checkpoint_ns";
      if (!postgres) return `${sql}'checkpoint' AS holds, c.type, c.checkpoint AS data ${join} ${order}`;
      const name = add(messagesKey ?? "messages");
      return `${sql}'messages' AS holds, c.checkpoint -> 'ts' AS "writtenAt", b.type, b.blob AS data ${join}
LEFT JOIN ${schema}checkpoint_blobs b ON b.thread_id = p.thread_id AND b.checkpoint_ns = p.checkpoint_ns
AND b.channel = ${name} AND b.version = c.checkpoint -> 'channel_versions' ->> ${name} ${order}`;
    });
  // Pre-checked when the saver's serializer is the JSON one the pre-check reads (a subclass or another serializer
  // may decode the same bytes differently: those threads are all revived).
  const precheck = messagesKey && jsonPlus && Object.getPrototypeOf(saver.serde) === jsonPlus.prototype;
  // A list of ids: the pages of each thread in turn.
  for (const thread of selection.threads ?? [undefined])
    for (let rows = await page(undefined, thread); ; ) {
      const last = rows.length < PAGE_SIZE ? undefined : rows[rows.length - 1];
      // PostgreSQL: the next page is asked for before this one is handed out (the server reads it while this one is judged).
      const next = last && postgres ? page(last, thread) : undefined;
      next?.catch(() => {}); // observed below; a consumer that stops early leaves it unread
      for (const row of rows) {
        // The row is the StoredCheckpoint: its columns are named so.
        const stored = row as unknown as StoredCheckpoint;
        const clean = precheck && cleanStoredThread(stored, messagesKey, provider);
        const key = { threadId: String(row.thread_id), namespace: String(row.checkpoint_ns ?? "") };
        yield { key, ...(precheck && (clean ? { clean } : { stored })) };
      }
      if (!last) break;
      rows = await (next ?? page(last, thread));
    }
}

/** Any saver: `list({})`, keeping the first tuple of each thread and namespace (savers list newest first). */
async function* listSource(saver: BaseCheckpointSaver, { threads, shard }: ThreadSelection) {
  async function* latestOf(configurable: Dict) {
    const seen = new Set<string>();
    for await (const tuple of saver.list({ configurable })) {
      const { thread_id, checkpoint_ns } = tuple.config?.configurable ?? {};
      const key = { threadId: String(thread_id), namespace: typeof checkpoint_ns === "string" ? checkpoint_ns : "" };
      const id = `${key.threadId}\u0000${key.namespace}`;
      if (!inShard(key.threadId, shard) || seen.has(id)) continue;
      seen.add(id);
      yield { key, tuple };
    }
  }
  if (!threads) return yield* latestOf({});
  for (const thread of threads)
    if (inShard(thread, shard))
      try {
        yield* latestOf({ thread_id: thread });
      } catch (error) {
        // The saver could not decode one of this thread's checkpoints: report the thread, go on.
        yield { key: { threadId: thread, namespace: "" }, error };
      }
}
