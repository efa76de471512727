/**
 * Stores for the thread tests: a SqliteSaver file, a PostgresSaver schema (skipped with the reason when
 * PostgreSQL is unreachable), the tests' own file-backed saver (read through `list({})`). Each is owned by one
 * test and removed after it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { postgresSaverOrSkip } from "../../support/services";
import { createFileSaver } from "./file-saver";

export type StoreName = "SqliteSaver" | "PostgresSaver" | "FileSaver";
export const STORE_NAMES: readonly StoreName[] = ["SqliteSaver", "PostgresSaver", "FileSaver"];

export interface TestStore {
  saver: BaseCheckpointSaver;
  /** Another saver on the same data, as another process would open it. */
  reopen(): BaseCheckpointSaver;
  /** SQLite file / PostgreSQL schema, for tests that reach into the tables. */
  file?: string;
  schema?: string;
}

interface Context {
  skip(note?: string): never;
  onTestFinished(fn: () => unknown): void;
}

export async function openTestStore(name: StoreName, context: Context): Promise<TestStore> {
  if (name === "PostgresSaver") {
    const handle = await postgresSaverOrSkip(context, "threads");
    return { saver: handle.saver, reopen: () => handle.reopen(), schema: handle.schema };
  }
  const dir = mkdtempSync(join(tmpdir(), "tool-repair-threads-"));
  if (name === "FileSaver") {
    const file = join(dir, "threads.json");
    context.onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    return { saver: createFileSaver({ file }), reopen: () => createFileSaver({ file }) };
  }
  const file = join(dir, "threads.sqlite");
  const opened: SqliteSaver[] = [];
  const open = () => {
    const saver = SqliteSaver.fromConnString(file);
    opened.push(saver);
    return saver;
  };
  context.onTestFinished(() => {
    for (const saver of opened) if (saver.db.open) saver.db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { saver: open(), reopen: open, file };
}

/**
 * Copies a thread's whole history (every checkpoint of namespace "", with its pending writes) under another
 * thread id and namespace, through the saver's own put / putWrites: many realistic threads from one real run.
 * `latestOnly` copies just the newest checkpoint (enough for a scan).
 */
export async function copyThread(
  saver: BaseCheckpointSaver,
  from: string,
  to: string,
  namespace = "",
  latestOnly = false,
): Promise<void> {
  const chain: CheckpointTuple[] = [];
  for await (const tuple of saver.list(
    { configurable: { thread_id: from, checkpoint_ns: "" } },
    latestOnly ? { limit: 1 } : undefined,
  ))
    chain.push(tuple);
  for (const tuple of chain.reverse()) {
    const parent = tuple.parentConfig?.configurable?.checkpoint_id as string | undefined;
    const config = {
      configurable: { thread_id: to, checkpoint_ns: namespace, ...(parent ? { checkpoint_id: parent } : {}) },
    };
    const stored = await saver.put(config, tuple.checkpoint, tuple.metadata!, { ...tuple.checkpoint.channel_versions });
    const byTask = new Map<string, [string, unknown][]>();
    for (const [task, channel, value] of tuple.pendingWrites ?? [])
      byTask.set(task, [...(byTask.get(task) ?? []), [channel, value]]);
    for (const [task, writes] of byTask) await saver.putWrites(stored, writes, task);
  }
}
