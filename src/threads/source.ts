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
import { readingInput } from "../errors";
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

/** Threads whose id hashes to `index` (1 to `count`) of `count` shards. */
export interface Shard {
  index: number;
  count: number;
}

export interface ThreadSelection {
  /** Only these thread ids (every namespace of each). */
  threads?: readonly string[];
  /** Only threads with a checkpoint written at or after this time (pushed down where the store allows). */
  since?: Date;
  /** Only the threads of this shard. */
  shard?: Shard;
  /** The state key of the messages: with it, SQLite and PostgreSQL threads are pre-checked as they are read. */
  messagesKey?: string;
  /** Whose rules the pre-check's clean verdict must hold for. Default `"strict"`. */
  provider?: Provider;
}

export interface ThreadSource {
  /** How the threads are enumerated, for reports ("sqlite", "postgres", "list"). */
  kind: "sqlite" | "postgres" | "list";
  items(): AsyncIterable<ThreadItem>;
  /** Number of threads the selection holds, when the store can count without reading them. */
  count(): Promise<number | undefined>;
}

/** A thread's latest checkpoint as stored, and its key. */
export interface StoredThread extends StoredCheckpoint {
  key: ThreadKey;
}

/** Threads per page: enough to keep round trips rare, small enough that memory does not depend on the store. */
export const PAGE_SIZE = 500;

/**
 * The smallest checkpoint id written at or after `since`. LangGraph's checkpoint ids are UUIDv6: the first 15
 * hex digits are the time in 100 ns steps since 1582-10-15, most significant first, so ids sort by time.
 */
export function checkpointIdAt(since: Date): string {
  const gregorianOffset = 0x01b21dd213814000n;
  const hex = (BigInt(since.getTime()) * 10_000n + gregorianOffset).toString(16).padStart(15, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-6${hex.slice(12, 15)}-0000-000000000000`;
}

/** The shard (1 to `count`) of a thread id: the same function as the SQL below. */
export function shardOf(threadId: string, count: number): number {
  return (Number.parseInt(createHash("md5").update(threadId, "utf8").digest("hex").slice(0, 8), 16) % count) + 1;
}

const inShard = (threadId: string, shard: Shard | undefined) =>
  !shard || shardOf(threadId, shard.count) === shard.index;

const keyOfRow = (row: Dict): ThreadKey => ({
  threadId: String(row.thread_id),
  namespace: String(row.checkpoint_ns ?? ""),
});

/**
 * The item for a stored thread: pre-checked when the saver's serializer is the JSON one the pre-check reads
 * (a subclass or another serializer may decode the same bytes differently: those threads are all revived).
 */
function itemOf(stored: StoredThread, { messagesKey, provider }: ThreadSelection, precheck: boolean): ThreadItem {
  if (!precheck || messagesKey === undefined) return { key: stored.key };
  const clean = cleanStoredThread(stored, messagesKey, provider);
  const { key, ...checkpoint } = stored;
  return clean ? { key, clean } : { key, stored: checkpoint };
}

// Read through the namespace: @langchain/langgraph-checkpoint 1.0.x does not export the class (a named import
// would fail to link there); without it, every saver keeps the generic path.
const jsonPlus = (checkpointPackage as { JsonPlusSerializer?: { prototype: object } }).JsonPlusSerializer;
const readsJson = (saver: BaseCheckpointSaver) =>
  jsonPlus !== undefined && Object.getPrototypeOf(saver.serde) === jsonPlus.prototype;

// ---------------------------------------------------------------------------------------------------------
// SQLite (SqliteSaver: a better-sqlite3 connection in `db`)

interface SqliteStatement {
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  pragma(sql: string): unknown;
  function(name: string, options: { deterministic: boolean }, fn: (...args: unknown[]) => unknown): unknown;
}

/** The SqliteSaver's connection, when `saver` is one (a better-sqlite3 `db`). */
function sqliteDatabaseOf(saver: BaseCheckpointSaver): SqliteDatabase | undefined {
  const db = (saver as unknown as Dict).db as Partial<SqliteDatabase> | undefined;
  return typeof db?.prepare === "function" && typeof db?.pragma === "function" && typeof db?.function === "function"
    ? (db as SqliteDatabase)
    : undefined;
}

function hasCheckpointTable(db: SqliteDatabase): boolean {
  const columns = new Set(
    (db.prepare("SELECT name FROM pragma_table_info('checkpoints')").all() as { name: string }[]).map((c) => c.name),
  );
  return columns.has("thread_id") && columns.has("checkpoint_ns") && columns.has("checkpoint_id");
}

const emptySource = (kind: ThreadSource["kind"]): ThreadSource => ({ kind, async *items() {}, count: async () => 0 });

/** The SQL function of a connection that gives a thread id's shard (registered once per connection). */
const SQLITE_SHARD_FUNCTION = "lgtr_shard_of";

function sqliteSource(db: SqliteDatabase, selection: ThreadSelection, precheck: boolean): ThreadSource {
  // A saver whose setup() never ran holds no threads (and reading must not create its tables).
  if (!hasCheckpointTable(db)) return emptySource("sqlite");
  const { shard } = selection;
  if (shard)
    db.function(SQLITE_SHARD_FUNCTION, { deterministic: true }, (id, count) => shardOf(String(id), Number(count)));
  const having = selection.since ? "HAVING MAX(checkpoint_id) >= @since" : "";
  const since = selection.since ? checkpointIdAt(selection.since) : undefined;
  const inShardSql = shard ? `${SQLITE_SHARD_FUNCTION}(thread_id, @shards) = @shard` : "";
  const where = (...conditions: string[]) => {
    const all = [...conditions, inShardSql].filter(Boolean);
    return all.length > 0 ? `WHERE ${all.join(" AND ")}` : "";
  };
  // One page: the latest checkpoint of each of the next PAGE_SIZE threads, with its bytes.
  const pageAfter = (after: string) =>
    db.prepare(
      `WITH page AS (SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id FROM checkpoints ${where(after)}
         GROUP BY thread_id, checkpoint_ns ${having} ORDER BY thread_id, checkpoint_ns LIMIT ${PAGE_SIZE})
       SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, c.type, c.checkpoint FROM page p JOIN checkpoints c
         ON c.thread_id = p.thread_id AND c.checkpoint_ns = p.checkpoint_ns AND c.checkpoint_id = p.checkpoint_id
       ORDER BY p.thread_id, p.checkpoint_ns`,
    );
  // The first page has no lower bound (a thread id may be ""); later pages start after the last key.
  const firstPage = pageAfter("");
  const nextPage = pageAfter("(thread_id, checkpoint_ns) > (@thread, @ns)");
  const ofThread = db.prepare(
    `SELECT thread_id, checkpoint_ns FROM checkpoints WHERE thread_id = @thread GROUP BY checkpoint_ns ${having} ORDER BY checkpoint_ns`,
  );
  const count = db.prepare(
    `SELECT COUNT(*) AS n FROM (SELECT 1 FROM checkpoints ${where()} GROUP BY thread_id, checkpoint_ns ${having})`,
  );
  const params = (extra: Dict) => ({
    ...extra,
    ...(since ? { since } : {}),
    ...(shard ? { shard: shard.index, shards: shard.count } : {}),
  });
  const toStored = (row: Dict): StoredThread => ({
    key: keyOfRow(row),
    checkpointId: String(row.checkpoint_id),
    type: row.type as string | null,
    data: row.checkpoint as Uint8Array | string | null,
    holds: "checkpoint",
  });
  return {
    kind: "sqlite",
    async *items() {
      if (selection.threads) {
        for (const thread of selection.threads) {
          if (!inShard(thread, shard)) continue;
          for (const row of ofThread.all(since ? { thread, since } : { thread }) as Dict[])
            yield { key: keyOfRow(row) };
        }
        return;
      }
      let rows = firstPage.all(params({})) as Dict[];
      for (;;) {
        for (const row of rows) yield itemOf(toStored(row), selection, precheck);
        if (rows.length < PAGE_SIZE) return;
        const last = rows[rows.length - 1];
        rows = nextPage.all(params({ thread: last.thread_id, ns: last.checkpoint_ns })) as Dict[];
      }
    },
    async count() {
      if (selection.threads) return undefined;
      return Number((count.get(params({})) as { n: number }).n);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// PostgreSQL (PostgresSaver: a pg Pool in `pool`, its schema in `options.schema`)

interface PgPool {
  query(text: string, values?: unknown[]): Promise<{ rows: Dict[] }>;
}

/** The PostgresSaver's pool and its schema (quoted), when `saver` is one. */
function postgresPoolOf(saver: BaseCheckpointSaver): { pool: PgPool; schema: string } | undefined {
  const { pool, options } = saver as unknown as { pool?: Partial<PgPool>; options?: { schema?: unknown } };
  if (typeof pool?.query !== "function" || typeof options?.schema !== "string") return undefined;
  return { pool: pool as PgPool, schema: `"${options.schema.replace(/"/g, '""')}"` };
}

/** Whether the saver's setup() created its tables (in its schema). */
async function postgresHasCheckpoints(pool: PgPool, schema: string): Promise<boolean> {
  const { rows } = await pool.query("SELECT to_regclass($1) AS found", [`${schema}.checkpoints`]);
  return Boolean(rows[0]?.found);
}

/** The first 32 bits of the MD5 of the thread id, unsigned: what {@link shardOf} computes. */
const POSTGRES_SHARD_OF = "('x' || lpad(left(md5(thread_id), 8), 16, '0'))::bit(64)::bigint";

/** SQL parameters numbered as they are added. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

function postgresSource(pool: PgPool, schema: string, selection: ThreadSelection, precheck: boolean): ThreadSource {
  const since = selection.since ? checkpointIdAt(selection.since) : undefined;
  const { shard } = selection;
  const table = `${schema}.checkpoints`;
  /** The keys of the selection (after `after`, when given), grouped by thread and namespace. */
  const keys = (p: Params, after?: Dict) => {
    const conditions = [
      ...(after ? [`(thread_id, checkpoint_ns) > (${p.add(after.thread_id)}, ${p.add(after.checkpoint_ns)})`] : []),
      ...(shard ? [`${POSTGRES_SHARD_OF} % ${p.add(shard.count)} + 1 = ${p.add(shard.index)}`] : []),
    ];
    return `FROM ${table} ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""} GROUP BY thread_id, checkpoint_ns
      ${since ? `HAVING MAX(checkpoint_id) >= ${p.add(since)}` : ""}`;
  };
  // One page: the latest checkpoint of each of the next PAGE_SIZE threads and the blob of its messages
  // channel (at the version the checkpoint names), as bytea: no array_agg, which pg parses char by char.
  const page = (after?: Dict) => {
    const p = new Params();
    const channel = p.add(selection.messagesKey ?? "messages");
    const text = `WITH page AS (SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id ${keys(p, after)}
        ORDER BY thread_id, checkpoint_ns LIMIT ${PAGE_SIZE})
      SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, c.checkpoint -> 'ts' AS ts, b.type, b.blob
      FROM page p JOIN ${table} c ON c.thread_id = p.thread_id AND c.checkpoint_ns = p.checkpoint_ns AND c.checkpoint_id = p.checkpoint_id
      LEFT JOIN ${schema}.checkpoint_blobs b ON b.thread_id = p.thread_id AND b.checkpoint_ns = p.checkpoint_ns
        AND b.channel = ${channel} AND b.version = c.checkpoint -> 'channel_versions' ->> ${channel}
      ORDER BY p.thread_id, p.checkpoint_ns`;
    return pool.query(text, p.values);
  };
  const toStored = (row: Dict): StoredThread => ({
    key: keyOfRow(row),
    checkpointId: String(row.checkpoint_id),
    type: row.type as string | null,
    data: row.blob as Uint8Array | null,
    holds: "messages",
    writtenAt: row.ts,
  });
  return {
    kind: "postgres",
    async *items() {
      if (selection.threads) {
        for (const thread of selection.threads) {
          if (!inShard(thread, shard)) continue;
          const having = since ? "HAVING MAX(checkpoint_id) >= $2" : "";
          const { rows } = await pool.query(
            `SELECT thread_id, checkpoint_ns FROM ${table} WHERE thread_id = $1 GROUP BY thread_id, ` +
              `checkpoint_ns ${having} ORDER BY checkpoint_ns`,
            since ? [thread, since] : [thread],
          );
          for (const row of rows) yield { key: keyOfRow(row) };
        }
        return;
      }
      // The next page is asked for before this one is handed out: the server reads it while this one is judged.
      let { rows } = await page();
      for (;;) {
        const next = rows.length < PAGE_SIZE ? undefined : page(rows[rows.length - 1]);
        next?.catch(() => {}); // observed below; a consumer that stops early leaves it unread
        for (const row of rows) yield itemOf(toStored(row), selection, precheck);
        if (!next) return;
        ({ rows } = await next);
      }
    },
    async count() {
      if (selection.threads) return undefined;
      const p = new Params();
      const { rows } = await pool.query(`SELECT COUNT(*)::int AS n FROM (SELECT 1 ${keys(p)}) AS threads`, p.values);
      return Number(rows[0]?.n ?? 0);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Any saver: list({})

const keyString = (key: ThreadKey) => `${key.threadId}\u0000${key.namespace}`;

function keyOf(tuple: CheckpointTuple): ThreadKey {
  const configurable = (tuple.config?.configurable ?? {}) as Dict;
  return {
    threadId: String(configurable.thread_id),
    namespace: typeof configurable.checkpoint_ns === "string" ? configurable.checkpoint_ns : "",
  };
}

function listSource(saver: BaseCheckpointSaver, selection: ThreadSelection): ThreadSource {
  async function* latestOf(config: Dict): AsyncGenerator<ThreadItem> {
    const seen = new Set<string>();
    for await (const tuple of saver.list({ configurable: config })) {
      const key = keyOf(tuple);
      if (!inShard(key.threadId, selection.shard)) continue;
      const id = keyString(key);
      if (seen.has(id)) continue;
      seen.add(id);
      yield { key, tuple };
    }
  }
  return {
    kind: "list",
    async *items() {
      if (!selection.threads) {
        yield* latestOf({});
        return;
      }
      for (const thread of selection.threads) {
        if (!inShard(thread, selection.shard)) continue;
        try {
          yield* latestOf({ thread_id: thread });
        } catch (error) {
          // The saver could not decode one of this thread's checkpoints: report the thread, go on.
          yield { key: { threadId: thread, namespace: "" }, error };
        }
      }
    },
    count: async () => undefined,
  };
}

/** The cheapest streaming enumeration this saver allows. */
export async function threadSourceFor(
  saver: BaseCheckpointSaver,
  selection: ThreadSelection = {},
): Promise<ThreadSource> {
  // Which saver it is, read under the input guard: a getter that throws is an input error naming the saver.
  const { db, postgres } = readingInput(
    () => {
      const db = sqliteDatabaseOf(saver);
      return { db, postgres: db ? undefined : postgresPoolOf(saver) };
    },
    "reading the threads of a saver",
    "saver",
  );
  const ownPages = db !== undefined || postgres !== undefined;
  const precheck = ownPages && readingInput(() => readsJson(saver), "reading the threads of a saver", "saver");
  if (db) return sqliteSource(db, selection, precheck);
  if (postgres) {
    if (!(await postgresHasCheckpoints(postgres.pool, postgres.schema))) return emptySource("postgres");
    return postgresSource(postgres.pool, postgres.schema, selection, precheck);
  }
  return listSource(saver, selection);
}
