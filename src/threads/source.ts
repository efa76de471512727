/**
 * Where the threads of a saver come from, one at a time, without loading the database.
 *
 * `saver.list({})` is the only portable way to see every thread, but it yields EVERY checkpoint of every
 * thread fully deserialized, and the official SQLite and PostgreSQL savers build that list in memory
 * (`.all()`, one `pool.query`). For those two the keys are read instead, a page at a time, in primary-key
 * order (thread, namespace) from their own tables; each thread's latest checkpoint is then read with the
 * saver's own `getTuple`, so its decoding stays the saver's. Any other saver is read through `list({})`,
 * keeping the first tuple of each thread and namespace (savers list newest first), with a set of the keys
 * seen so far.
 */
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { readingInput } from "../errors";
import type { Dict } from "../values";

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
}

export interface ThreadSelection {
  /** Only these thread ids (every namespace of each). */
  threads?: readonly string[];
  /** Only threads with a checkpoint written at or after this time (pushed down where the store allows). */
  since?: Date;
}

export interface ThreadSource {
  /** How the threads are enumerated, for reports ("sqlite", "postgres", "list"). */
  kind: "sqlite" | "postgres" | "list";
  items(): AsyncIterable<ThreadItem>;
  /** Number of threads the selection holds, when the store can count without reading them. */
  count(): Promise<number | undefined>;
}

/** Keys per page: enough to keep round trips rare, small enough that memory does not depend on the store. */
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


// ---------------------------------------------------------------------------------------------------------
// SQLite (SqliteSaver: a better-sqlite3 connection in `db`)

interface SqliteStatement {
  all(...params: unknown[]): unknown[];
  get(...params: unknown[]): unknown;
}
interface SqliteDatabase {
  prepare(sql: string): SqliteStatement;
  pragma(sql: string): unknown;
}

/** The SqliteSaver's connection, when `saver` is one (a better-sqlite3 `db`). */
function sqliteDatabaseOf(saver: BaseCheckpointSaver): SqliteDatabase | undefined {
  const db = (saver as unknown as Dict).db as Partial<SqliteDatabase> | undefined;
  return typeof db?.prepare === "function" && typeof db?.pragma === "function" ? (db as SqliteDatabase) : undefined;
}

function hasCheckpointTable(db: SqliteDatabase): boolean {
  const columns = new Set((db.prepare("SELECT name FROM pragma_table_info('checkpoints')").all() as { name: string }[]).map((c) => c.name));
  return columns.has("thread_id") && columns.has("checkpoint_ns") && columns.has("checkpoint_id");
}

const emptySource = (kind: ThreadSource["kind"]): ThreadSource => ({ kind, async *items() {}, count: async () => 0 });

function sqliteSource(db: SqliteDatabase, selection: ThreadSelection): ThreadSource {
  // A saver whose setup() never ran holds no threads (and reading must not create its tables).
  if (!hasCheckpointTable(db)) return emptySource("sqlite");
  const having = selection.since ? "HAVING MAX(checkpoint_id) >= @since" : "";
  const since = selection.since ? checkpointIdAt(selection.since) : undefined;
  const pageAfter = (where: string) =>
    db.prepare(
      `SELECT thread_id, checkpoint_ns FROM checkpoints ${where}
       GROUP BY thread_id, checkpoint_ns ${having} ORDER BY thread_id, checkpoint_ns LIMIT ${PAGE_SIZE}`,
    );
  // The first page has no lower bound (a thread id may be ""); later pages start after the last key.
  const firstPage = pageAfter("");
  const nextPage = pageAfter("WHERE (thread_id, checkpoint_ns) > (@thread, @ns)");
  const ofThread = db.prepare(
    `SELECT thread_id, checkpoint_ns FROM checkpoints WHERE thread_id = @thread GROUP BY checkpoint_ns ${having} ORDER BY checkpoint_ns`,
  );
  const count = db.prepare(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM checkpoints GROUP BY thread_id, checkpoint_ns ${having})`);
  const params = (extra: Dict) => (since ? { ...extra, since } : extra);
  type Row = { thread_id: string; checkpoint_ns: string };
  const toItem = (row: Row): ThreadItem => ({ key: { threadId: String(row.thread_id), namespace: String(row.checkpoint_ns ?? "") } });
  return {
    kind: "sqlite",
    async *items() {
      if (selection.threads) {
        for (const thread of selection.threads) for (const row of ofThread.all(params({ thread })) as Row[]) yield toItem(row);
        return;
      }
      let rows = firstPage.all(params({})) as Row[];
      for (;;) {
        for (const row of rows) yield toItem(row);
        if (rows.length < PAGE_SIZE) return;
        const last = rows[rows.length - 1];
        rows = nextPage.all(params({ thread: last.thread_id, ns: last.checkpoint_ns })) as Row[];
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

/** The PostgresSaver's pool and checkpoints table, when `saver` is one. */
function postgresPoolOf(saver: BaseCheckpointSaver): { pool: PgPool; table: string } | undefined {
  const { pool, options } = saver as unknown as { pool?: Partial<PgPool>; options?: { schema?: unknown } };
  if (typeof pool?.query !== "function" || typeof options?.schema !== "string") return undefined;
  return { pool: pool as PgPool, table: `"${options.schema.replace(/"/g, '""')}".checkpoints` };
}

/** Whether the saver's setup() created its tables (in its schema). */
async function postgresHasCheckpoints(pool: PgPool, table: string): Promise<boolean> {
  const { rows } = await pool.query("SELECT to_regclass($1) AS found", [table]);
  return Boolean(rows[0]?.found);
}

function postgresSource(pool: PgPool, table: string, selection: ThreadSelection): ThreadSource {
  const since = selection.since ? checkpointIdAt(selection.since) : undefined;
  type Row = { thread_id: string; checkpoint_ns: string };
  const toItem = (row: Dict): ThreadItem => {
    const { thread_id, checkpoint_ns } = row as Row;
    return { key: { threadId: String(thread_id), namespace: String(checkpoint_ns ?? "") } };
  };
  return {
    kind: "postgres",
    async *items() {
      if (selection.threads) {
        for (const thread of selection.threads) {
          const having = since ? "HAVING MAX(checkpoint_id) >= $2" : "";
          const { rows } = await pool.query(
            `SELECT thread_id, checkpoint_ns FROM ${table} WHERE thread_id = $1 GROUP BY thread_id, checkpoint_ns ${having} ORDER BY checkpoint_ns`,
            since ? [thread, since] : [thread],
          );
          for (const row of rows) yield toItem(row);
        }
        return;
      }
      // The first page has no lower bound (a thread id may be ""); later pages start after the last key.
      const page = (where: string, first: number) =>
        `SELECT thread_id, checkpoint_ns FROM ${table} ${where} GROUP BY thread_id, checkpoint_ns
         ${since ? `HAVING MAX(checkpoint_id) >= $${first}` : ""} ORDER BY thread_id, checkpoint_ns LIMIT ${PAGE_SIZE}`;
      const firstPage = page("", 1);
      const nextPage = page("WHERE (thread_id, checkpoint_ns) > ($1, $2)", 3);
      let { rows } = await pool.query(firstPage, since ? [since] : []);
      for (;;) {
        for (const row of rows) yield toItem(row);
        if (rows.length < PAGE_SIZE) return;
        const last = rows[rows.length - 1] as Row;
        ({ rows } = await pool.query(nextPage, since ? [last.thread_id, last.checkpoint_ns, since] : [last.thread_id, last.checkpoint_ns]));
      }
    },
    async count() {
      if (selection.threads) return undefined;
      const having = since ? "HAVING MAX(checkpoint_id) >= $1" : "";
      const { rows } = await pool.query(
        `SELECT COUNT(*)::int AS n FROM (SELECT 1 FROM ${table} GROUP BY thread_id, checkpoint_ns ${having}) AS threads`,
        since ? [since] : [],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Any saver: list({})

const keyString = (key: ThreadKey) => `${key.threadId}\u0000${key.namespace}`;

function keyOf(tuple: CheckpointTuple): ThreadKey {
  const configurable = (tuple.config?.configurable ?? {}) as Dict;
  return { threadId: String(configurable.thread_id), namespace: typeof configurable.checkpoint_ns === "string" ? configurable.checkpoint_ns : "" };
}

function listSource(saver: BaseCheckpointSaver, selection: ThreadSelection): ThreadSource {
  async function* latestOf(config: Dict): AsyncGenerator<ThreadItem> {
    const seen = new Set<string>();
    for await (const tuple of saver.list({ configurable: config })) {
      const key = keyOf(tuple);
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
export async function threadSourceFor(saver: BaseCheckpointSaver, selection: ThreadSelection = {}): Promise<ThreadSource> {
  // Which saver it is, read under the input guard: a getter that throws is an input error naming the saver.
  const { db, postgres } = readingInput(
    () => {
      const db = sqliteDatabaseOf(saver);
      return { db, postgres: db ? undefined : postgresPoolOf(saver) };
    },
    "reading the threads of a saver",
    "saver",
  );
  if (db) return sqliteSource(db, selection);
  if (postgres) {
    if (!(await postgresHasCheckpoints(postgres.pool, postgres.table))) return emptySource("postgres");
    return postgresSource(postgres.pool, postgres.table, selection);
  }
  return listSource(saver, selection);
}
