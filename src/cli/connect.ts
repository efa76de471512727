/**
 * Opening the store named on the command line. The official savers are optional dependencies, imported only
 * when their flag is used; a missing one is named with the command that installs it. A `--saver` module is
 * resolved from the working directory (the user's project) first.
 */
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import type { Dict } from "../values";
import { SAVER_METHODS } from "../threads/repair-thread";
import { UsageError, type CliArgs } from "./args";
import { optionSecrets, urlSecrets } from "./redact";

export const SQLITE_PACKAGE = "@langchain/langgraph-checkpoint-sqlite";
const POSTGRES_PACKAGE = "@langchain/langgraph-checkpoint-postgres";

/** The store could not be opened (missing package, unreachable server, not a checkpoint database): exit 2. */
export class SetupError extends Error {
  override name = "SetupError";
}

export interface OpenedStore {
  saver: BaseCheckpointSaver;
  /** What was opened, safe to print. */
  label: string;
  close(): Promise<void>;
}

export type ModuleImporter = (specifier: string, cwd: string) => Promise<Record<string, unknown>>;

const isModuleNotFound = (error: unknown) => {
  const code = (error as { code?: unknown })?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
};

/** Imports a package as the CLI's own dependency, else from the project in `cwd` (an `npx` run lives elsewhere). */
export const importModule: ModuleImporter = async (specifier, cwd) => {
  if (specifier.startsWith(".") || isAbsolute(specifier)) return import(pathToFileURL(resolve(cwd, specifier)).href);
  try {
    return await import(specifier);
  } catch (error) {
    if (!isModuleNotFound(error) || !String((error as Error).message).includes(specifier)) throw error;
    let resolved: string;
    try {
      resolved = createRequire(join(cwd, "package.json")).resolve(specifier);
    } catch {
      throw error;
    }
    return import(pathToFileURL(resolved).href);
  }
};

async function loadPackage(
  specifier: string,
  flag: string,
  cwd: string,
  load: ModuleImporter,
): Promise<Record<string, unknown>> {
  try {
    return await load(specifier, cwd);
  } catch (error) {
    const path = specifier.startsWith(".") || isAbsolute(specifier);
    if (isModuleNotFound(error) && (path || String((error as Error).message).includes(specifier)))
      throw new SetupError(
        path
          ? `${flag}: no such module: ${specifier}`
          : `${flag} needs the package ${specifier}, which is not installed. Install it with: npm install ${specifier}`,
      );
    throw new SetupError(`${flag}: could not load ${specifier}: ${(error as Error).message}`);
  }
}

/** Closes what the saver holds open: a pg pool (`end`), a better-sqlite3 connection (`db.close`), or `close`. */
async function closeSaver(saver: unknown): Promise<void> {
  const s = saver as { end?: () => unknown; close?: () => unknown; db?: { open?: boolean; close?: () => unknown } };
  if (typeof s.end === "function") await s.end();
  else if (typeof s.close === "function") await s.close();
  else if (s.db?.open && typeof s.db.close === "function") s.db.close();
}

async function openSqlite(file: string, cwd: string, load: ModuleImporter): Promise<OpenedStore> {
  const path = resolve(cwd, file);
  // Opening a missing file would create an empty database, and the saver would create its tables in it.
  if (!existsSync(path) || !statSync(path).isFile()) throw new UsageError(`--sqlite: no such file: ${file}`);
  const { SqliteSaver } = (await loadPackage(SQLITE_PACKAGE, "--sqlite", cwd, load)) as {
    SqliteSaver: { fromConnString(path: string): BaseCheckpointSaver };
  };
  const saver = SqliteSaver.fromConnString(path);
  const db = (saver as unknown as { db: { prepare(sql: string): { get(): unknown }; close(): void } }).db;
  try {
    if (!db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'").get())
      throw new SetupError(`${file} has no checkpoints table: not a SqliteSaver database`);
  } catch (error) {
    db.close();
    throw error instanceof SetupError ? error : new SetupError(`${file}: ${(error as Error).message}`);
  }
  return { saver, label: `SQLite ${file}`, close: () => closeSaver(saver) };
}

async function openPostgres(
  url: string,
  options: Record<string, unknown> | undefined,
  cwd: string,
  load: ModuleImporter,
): Promise<OpenedStore> {
  const { PostgresSaver } = (await loadPackage(POSTGRES_PACKAGE, "--postgres", cwd, load)) as {
    PostgresSaver: { fromConnString(url: string, options?: Record<string, unknown>): BaseCheckpointSaver };
  };
  let saver: BaseCheckpointSaver;
  try {
    saver = PostgresSaver.fromConnString(url, options);
  } catch (error) {
    throw new SetupError(`--postgres: ${(error as Error).message}`);
  }
  const schema = String((saver as unknown as { options?: { schema?: unknown } }).options?.schema ?? "public");
  const { pool } = saver as unknown as { pool: { query(text: string, values: unknown[]): Promise<{ rows: Dict[] }> } };
  try {
    const { rows } = await pool.query("SELECT to_regclass($1) AS found", [
      `"${schema.replace(/"/g, '""')}".checkpoints`,
    ]);
    if (!rows[0]?.found)
      throw new SetupError(
        `PostgreSQL schema "${schema}" has no checkpoints table: not a PostgresSaver database (see --saver-options {"schema":...})`,
      );
  } catch (error) {
    await closeSaver(saver).catch(() => {});
    throw error instanceof SetupError
      ? error
      : new SetupError(`could not connect to PostgreSQL: ${(error as Error).message}`);
  }
  return { saver, label: `PostgreSQL (schema ${schema})`, close: () => closeSaver(saver) };
}

async function openModule(
  spec: { module: string; exportName?: string },
  options: Record<string, unknown> | undefined,
  cwd: string,
  load: ModuleImporter,
): Promise<OpenedStore> {
  const flag = `--saver ${spec.module}`;
  const loaded = await loadPackage(spec.module, "--saver", cwd, load);
  const name = spec.exportName ?? "default";
  const value = loaded[name];
  if (value === undefined) {
    const names = Object.keys(loaded).filter((k) => k !== "default");
    throw new UsageError(
      `${flag}: no export "${name}"${names.length ? ` (exports: ${names.slice(0, 10).join(", ")}; pick one with MODULE:EXPORT)` : ""}`,
    );
  }
  let saver = value as Partial<BaseCheckpointSaver>;
  try {
    // A class (its prototype reads checkpoints) is constructed; any other function is a factory.
    if (typeof value === "function")
      saver =
        typeof value.prototype?.getTuple === "function"
          ? new (value as new (o: unknown) => object)(options)
          : await value(options);
  } catch (error) {
    throw new SetupError(`${flag}: creating the saver failed: ${(error as Error).message}`);
  }
  if (SAVER_METHODS.some((method) => typeof saver?.[method] !== "function"))
    throw new UsageError(`${flag}: "${name}" is not a checkpoint saver, a factory of one, or a saver class`);
  return {
    saver: saver as BaseCheckpointSaver,
    label: `${spec.module}${spec.exportName ? `:${spec.exportName}` : ""}`,
    close: () => closeSaver(saver),
  };
}

/** What must never be printed for this command line: the PostgreSQL URL and its parts, secret-looking saver options. */
export function secretsOf(args: Pick<CliArgs, "store" | "saverOptions">): string[] {
  return [...(args.store.kind === "postgres" ? urlSecrets(args.store.url) : []), ...optionSecrets(args.saverOptions)];
}

export async function openStore(
  args: Pick<CliArgs, "store" | "saverOptions">,
  cwd: string,
  load: ModuleImporter = importModule,
): Promise<OpenedStore> {
  const { store } = args;
  if (store.kind === "sqlite") return openSqlite(store.file, cwd, load);
  if (store.kind === "postgres") return openPostgres(store.url, args.saverOptions, cwd, load);
  return openModule(store, args.saverOptions, cwd, load);
}
