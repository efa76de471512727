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

// Read through the namespace: @langchain/langgraph-checkpoint 1.0.x does not export the class (a named import
// would fail to link there); without it, every saver keeps the generic path.
const jsonPlus = (checkpointPackage as { JsonPlusSerializer?: { prototype: object } }).JsonPlusSerializer;

/** What a store read in pages of its own (SQLite, PostgreSQL) differs in. */
interface SqlDialect {
  kind: "sqlite" | "postgres";
  /** Whether the saver's setup() created its tables (reading must not create them). */
  hasTable(): Promise<boolean>;
  query(sql: string, values: unknown[]): Promise<Dict[]>;
  /** The condition that a row's thread is in shard `index` (a placeholder) of `count` (another). */
  inShard(count: string, index: string): string;
  checkpoints: string;
  /** What the page reads beside the key: `type` and `data` (and `ts` when `data` is not the checkpoint). */
  columns: string;
  /** Joined to the latest checkpoint `c` of each thread of the page `p`, for `columns`. */
  join(add: (value: unknown) => string, channel: string): string;
}

/** The SQL function of a connection that gives a thread id's shard (registered once per connection). */
const SQLITE_SHARD_FUNCTION = "lgtr_shard_of";

interface SqliteDatabase {
  prepare(sql: string): { all(...params: unknown[]): unknown[] };
  function(name: string, options: { deterministic: boolean }, fn: (...args: unknown[]) => unknown): unknown;
}

/** SqliteSaver: a better-sqlite3 connection in `db`. */
function sqliteDialect(db: SqliteDatabase, shard: Shard | undefined): SqlDialect {
  if (shard)
    db.function(SQLITE_SHARD_FUNCTION, { deterministic: true }, (id, count) => shardOf(String(id), Number(count)));
  const query = async (sql: string, values: unknown[]) => db.prepare(sql).all(...values) as Dict[];
  return {
    kind: "sqlite",
    hasTable: async () =>
      (await query("SELECT name FROM pragma_table_info('checkpoints')", [])).filter((c) =>
        ["thread_id", "checkpoint_ns", "checkpoint_id"].includes(c.name as string),
      ).length === 3,
    query,
    inShard: (count, index) => `${SQLITE_SHARD_FUNCTION}(thread_id, ${count}) = ${index}`,
    checkpoints: "checkpoints",
    columns: "c.type, c.checkpoint AS data",
    join: () => "",
  };
}

interface PgPool {
  query(text: string, values?: unknown[]): Promise<{ rows: Dict[] }>;
}

/** PostgresSaver: a pg Pool in `pool`, its schema in `options.schema`. */
function postgresDialect(pool: PgPool, schemaName: string): SqlDialect {
  const schema = `"${schemaName.replace(/"/g, '""')}"`;
  const query = async (sql: string, values: unknown[]) => (await pool.query(sql, values)).rows;
  return {
    kind: "postgres",
    hasTable: async () =>
      Boolean((await query("SELECT to_regclass($1) AS found", [`${schema}.checkpoints`]))[0]?.found),
    query,
    // The first 32 bits of the MD5 of the thread id, unsigned: what shardOf computes.
    inShard: (count, index) =>
      `('x' || lpad(left(md5(thread_id), 8), 16, '0'))::bit(64)::bigint % ${count} + 1 = ${index}`,
    checkpoints: `${schema}.checkpoints`,
    // The blob of the messages channel at the version the checkpoint names, as bytea: no array_agg, which pg
    // parses char by char.
    columns: "c.checkpoint -> 'ts' AS ts, b.type, b.blob AS data",
    join: (add, channel) => {
      const name = add(channel);
      return `LEFT JOIN ${schema}.checkpoint_blobs b ON b.thread_id = p.thread_id AND b.checkpoint_ns = p.checkpoint_ns
        AND b.channel = ${name} AND b.version = c.checkpoint -> 'channel_versions' ->> ${name}`;
    },
  };
}

/** The threads of a store read in pages of its own: each thread's latest checkpoint, with its bytes. */
function sqlSource(dialect: SqlDialect, selection: ThreadSelection, precheck: boolean): ThreadSource {
  const { shard, messagesKey, provider } = selection;
  const since = selection.since && checkpointIdAt(selection.since);
  const { checkpoints, query } = dialect;
  const postgres = dialect.kind === "postgres";
  /** A statement and its values, the placeholders numbered as they are added. */
  const statement = (build: (add: (value: unknown) => string) => string): [string, unknown[]] => {
    const values: unknown[] = [];
    const sql = build((value) => {
      const n = values.push(value);
      return postgres ? `$${n}` : "?";
    });
    return [sql, values];
  };
  /** The keys of the selection (after `after`, when given), grouped by thread and namespace. */
  const keys = (add: (value: unknown) => string, after?: Dict) => {
    const conditions = [
      ...(after ? [`(thread_id, checkpoint_ns) > (${add(after.thread_id)}, ${add(after.checkpoint_ns)})`] : []),
      ...(shard ? [dialect.inShard(add(shard.count), add(shard.index))] : []),
    ];
    return `FROM ${checkpoints} ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""}
      GROUP BY thread_id, checkpoint_ns ${since ? `HAVING MAX(checkpoint_id) >= ${add(since)}` : ""}`;
  };
  // One page: the latest checkpoint of each of the next PAGE_SIZE threads, with its bytes. The first page has
  // no lower bound (a thread id may be ""); later pages start after the last key.
  const page = (after?: Dict) =>
    query(
      ...statement(
        (add) => `WITH page AS (SELECT thread_id, checkpoint_ns, MAX(checkpoint_id) AS checkpoint_id ${keys(add, after)}
          ORDER BY thread_id, checkpoint_ns LIMIT ${PAGE_SIZE})
        SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, ${dialect.columns} FROM page p JOIN ${checkpoints} c
          ON c.thread_id = p.thread_id AND c.checkpoint_ns = p.checkpoint_ns AND c.checkpoint_id = p.checkpoint_id
          ${dialect.join(add, messagesKey ?? "messages")} ORDER BY p.thread_id, p.checkpoint_ns`,
      ),
    );
  /**
   * The item for a stored thread: pre-checked when the saver's serializer is the JSON one the pre-check reads
   * (a subclass or another serializer may decode the same bytes differently: those threads are all revived).
   */
  const itemOf = (row: Dict): ThreadItem => {
    const key = keyOfRow(row);
    if (!precheck || messagesKey === undefined) return { key };
    const stored: StoredCheckpoint = {
      checkpointId: String(row.checkpoint_id),
      type: row.type as string | null,
      data: row.data as Uint8Array | string | null,
      holds: postgres ? "messages" : "checkpoint",
      writtenAt: row.ts,
    };
    const clean = cleanStoredThread(stored, messagesKey, provider);
    return clean ? { key, clean } : { key, stored };
  };
  return {
    kind: dialect.kind,
    async *items() {
      if (selection.threads) {
        for (const thread of selection.threads) {
          if (!inShard(thread, shard)) continue;
          const [sql, values] = statement(
            (add) =>
              `SELECT thread_id, checkpoint_ns FROM ${checkpoints} WHERE thread_id = ${add(thread)} GROUP BY thread_id, ` +
              `checkpoint_ns ${since ? `HAVING MAX(checkpoint_id) >= ${add(since)}` : ""} ORDER BY checkpoint_ns`,
          );
          for (const row of await query(sql, values)) yield { key: keyOfRow(row) };
        }
        return;
      }
      let rows = await page();
      for (;;) {
        const last = rows.length < PAGE_SIZE ? undefined : rows[rows.length - 1];
        // PostgreSQL: the next page is asked for before this one is handed out (the server reads it while this one is judged).
        const next = last && postgres ? page(last) : undefined;
        next?.catch(() => {}); // observed below; a consumer that stops early leaves it unread
        for (const row of rows) yield itemOf(row);
        if (!last) return;
        rows = await (next ?? page(last));
      }
    },
    async count() {
      if (selection.threads) return undefined;
      const [sql, values] = statement((add) => `SELECT COUNT(*) AS n FROM (SELECT 1 ${keys(add)}) AS threads`);
      return Number((await query(sql, values))[0]?.n ?? 0);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Any saver: list({})

function listSource(saver: BaseCheckpointSaver, selection: ThreadSelection): ThreadSource {
  async function* latestOf(config: Dict): AsyncGenerator<ThreadItem> {
    const seen = new Set<string>();
    for await (const tuple of saver.list({ configurable: config })) {
      const configurable = (tuple.config?.configurable ?? {}) as Dict;
      const threadId = String(configurable.thread_id);
      const namespace = typeof configurable.checkpoint_ns === "string" ? configurable.checkpoint_ns : "";
      const id = `${threadId}\u0000${namespace}`;
      if (!inShard(threadId, selection.shard) || seen.has(id)) continue;
      seen.add(id);
      yield { key: { threadId, namespace }, tuple };
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
  const { db, pool, options } = saver as unknown as {
    db?: SqliteDatabase;
    pool?: PgPool;
    options?: { schema?: unknown };
  };
  const dialect =
    typeof db?.prepare === "function" && typeof db.function === "function"
      ? sqliteDialect(db, selection.shard)
      : typeof pool?.query === "function" && typeof options?.schema === "string"
        ? postgresDialect(pool, options.schema)
        : undefined;
  if (!dialect) return listSource(saver, selection);
  // A saver whose setup() never ran holds no threads.
  if (!(await dialect.hasTable())) return { kind: dialect.kind, async *items() {}, count: async () => 0 };
  return sqlSource(
    dialect,
    selection,
    jsonPlus !== undefined && Object.getPrototypeOf(saver.serde) === jsonPlus.prototype,
  );
}
