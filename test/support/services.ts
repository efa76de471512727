/**
 * Real servers for tests: PostgreSQL on 127.0.0.1:5432 (trust auth, user `postgres`, database `test`) through
 * the official PostgresSaver.
 *
 * A test that needs a server skips with a one-line reason when it is unreachable, so a newcomer's `npm test`
 * passes; with `LGTR_REQUIRE_SERVICES=1` (set by .ci/run) it fails instead. Each saver gets its own schema,
 * created here and dropped by `dispose()`.
 */
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { randomBytes } from "node:crypto";

export const POSTGRES_URL = process.env.LGTR_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

/** True when CI demands every service: a missing server is a failure, not a skip. */
export const servicesRequired = (): boolean => process.env.LGTR_REQUIRE_SERVICES === "1";

let probe: Promise<string | undefined> | undefined;

/** Why PostgreSQL cannot be used (one line), or undefined when it answers. Probed once per process. */
export function postgresUnavailable(): Promise<string | undefined> {
  probe ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2_000 });
    try {
      await client.connect();
      await client.query("select 1");
      return undefined;
    } catch (error) {
      const text = error instanceof Error ? error.message || error.name : String(error);
      return `PostgreSQL unreachable at ${POSTGRES_URL.replace(/\/\/[^@]*@/, "//")}: ${text.split("\n")[0]}`;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return probe;
}

/**
 * For a whole `describe`: undefined when PostgreSQL answers, else the skip reason. Throws when services are
 * required, so the file fails instead of skipping.
 */
export async function postgresSkipReason(): Promise<string | undefined> {
  const reason = await postgresUnavailable();
  if (reason && servicesRequired()) throw new Error(`LGTR_REQUIRE_SERVICES=1 but ${reason}`);
  return reason;
}

/** A fresh schema name: lower case, unique per process and call. */
export function uniqueSchema(label: string): string {
  const clean = label
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .slice(0, 30);
  return `lgtr_${clean}_${process.pid}_${randomBytes(4).toString("hex")}`;
}

export interface PostgresSaverHandle {
  saver: PostgresSaver;
  schema: string;
  /** Another saver on the same schema with its own pool, as another process would open it. */
  reopen(): PostgresSaver;
  /** Ends every pool opened here and drops the schema. */
  dispose(): Promise<void>;
}

/** A small pool: tests open many savers, and the server allows 100 connections for every engineer. */
export function postgresSaverOn(schema: string, max = 3): PostgresSaver {
  return new PostgresSaver(new pg.Pool({ connectionString: POSTGRES_URL, max }), undefined, { schema });
}

/** A PostgresSaver on a schema of its own (set up, empty). Call only once PostgreSQL is known to answer. */
export async function createPostgresSaver(label = "t"): Promise<PostgresSaverHandle> {
  const schema = uniqueSchema(label);
  const opened: PostgresSaver[] = [];
  const open = () => {
    const saver = postgresSaverOn(schema);
    opened.push(saver);
    return saver;
  };
  const saver = open();
  await saver.setup();
  return {
    saver,
    schema,
    reopen: open,
    dispose: async () => {
      await Promise.all(opened.splice(0).map((s) => s.end().catch(() => {})));
      await dropSchema(schema);
    },
  };
}

/** Drops `schema` and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema.replace(/"/g, "")}" CASCADE`);
  } finally {
    await client.end();
  }
}

export interface SkippableContext {
  skip(note?: string): never;
  onTestFinished(fn: () => unknown): void;
}

/**
 * Inside a test: a PostgresSaver on a schema of its own, dropped when the test finishes. When PostgreSQL is
 * unreachable the test is skipped with the reason (or fails, with `LGTR_REQUIRE_SERVICES=1`).
 */
export async function postgresSaverOrSkip(context: SkippableContext, label = "t"): Promise<PostgresSaverHandle> {
  const reason = await postgresUnavailable();
  if (reason) {
    if (servicesRequired()) throw new Error(`LGTR_REQUIRE_SERVICES=1 but ${reason}`);
    context.skip(reason);
  }
  const handle = await createPostgresSaver(label);
  context.onTestFinished(() => handle.dispose());
  return handle;
}
