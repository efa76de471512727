/**
 * Opening the store named on the command line. The official savers are optional dependencies, imported only
 * when their flag is used; a missing one is named with the command that installs it. A `--saver` module is
 * resolved from the working directory (the user's project) first. What cannot be opened (a missing package, an
 * unreachable server, not a checkpoint database) is a `UsageError`: exit 2.
 */
import { statSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SAVER_METHODS } from "../threads/repair-thread";
import type { Dict } from "../values";
import { UsageError, type CliArgs } from "./args";
import { optionSecrets, urlSecrets } from "./redact";
import { notFound } from "./start";

const PACKAGE = "@langchain/langgraph-checkpoint-";
export const SQLITE_PACKAGE = `${PACKAGE}sqlite`;

export interface OpenedStore {
  saver: BaseCheckpointSaver;
  /** What was opened, safe to print. */
  label: string;
  close(): Promise<void>;
}

export type ModuleImporter = (specifier: string, cwd: string) => Promise<Dict>;

/** What is reached into: SqliteSaver's better-sqlite3 `db`, PostgresSaver's pg `pool` and `options`. */
type Official = BaseCheckpointSaver & {
  db: { prepare(sql: string): { get(): unknown } };
  pool: { query(sql: string, values: unknown[]): Promise<{ rows: Dict[] }> };
  options?: { schema?: unknown };
};

const isPath = (specifier: string) => specifier.startsWith(".") || isAbsolute(specifier);

/** Imports a package as the CLI's own dependency, else from the project in `cwd` (an `npx` run lives elsewhere). */
export const importModule: ModuleImporter = async (specifier, cwd) => {
  if (isPath(specifier)) return import(pathToFileURL(resolve(cwd, specifier)).href);
  try {
    return await import(specifier);
  } catch (error) {
    if (!notFound(error) || !String((error as Error).message).includes(specifier)) throw error;
    let resolved: string;
    try {
      resolved = createRequire(join(cwd, "package.json")).resolve(specifier);
    } catch {
      throw error;
    }
    return import(pathToFileURL(resolved).href);
  }
};

async function loadPackage(specifier: string, flag: string, cwd: string, load: ModuleImporter): Promise<Dict> {
  try {
    return await load(specifier, cwd);
  } catch (error) {
    const { message } = error as Error;
    throw new UsageError(
      !notFound(error) || !(isPath(specifier) || String(message).includes(specifier))
        ? `${flag}: could not load ${specifier}: ${message}`
        : isPath(specifier)
          ? `${flag}: no such module: ${specifier}`
          : `${flag} needs the package ${specifier}, which is not installed. Install it with: npm install ${specifier}`,
    );
  }
}

/** Closes what the saver holds open: a pg pool (`end`), a better-sqlite3 connection (`db.close`), or `close`. */
async function closeSaver(saver: unknown): Promise<void> {
  const s = saver as { end?: () => unknown; close?: () => unknown; db?: { open?: boolean; close?: () => unknown } };
  if (typeof s.end === "function") await s.end();
  else if (typeof s.close === "function") await s.close();
  else if (s.db?.open && typeof s.db.close === "function") s.db.close();
}

const opened = (saver: BaseCheckpointSaver, label: string): OpenedStore => ({
  saver,
  label,
  close: () => closeSaver(saver),
});

/** What must never be printed for this command line: the PostgreSQL URL and its parts, secret-looking saver options. */
export function secretsOf(args: Pick<CliArgs, "store" | "saverOptions">): string[] {
  return [...(args.store.kind === "postgres" ? urlSecrets(args.store.url) : []), ...optionSecrets(args.saverOptions)];
}

export async function openStore(
  { store, saverOptions: options }: Pick<CliArgs, "store" | "saverOptions">,
  load: ModuleImporter = importModule,
): Promise<OpenedStore> {
  const cwd = process.cwd();
  if (store.kind === "saver") {
    const { module, exportName: name = "default" } = store;
    const flag = `--saver ${module}`;
    const loaded = await loadPackage(module, "--saver", cwd, load);
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
        saver = value.prototype?.getTuple ? new (value as new (o: unknown) => object)(options) : await value(options);
    } catch (error) {
      throw new UsageError(`${flag}: creating the saver failed: ${(error as Error).message}`);
    }
    if (SAVER_METHODS.some((method) => typeof saver?.[method] !== "function"))
      throw new UsageError(`${flag}: "${name}" is not a checkpoint saver, a factory of one, or a saver class`);
    return opened(saver as BaseCheckpointSaver, `${module}${store.exportName ? `:${name}` : ""}`);
  }

  const sqlite = store.kind === "sqlite";
  const path = sqlite ? resolve(cwd, store.file) : store.url;
  // Opening a missing file would create an empty database, and the saver would create its tables in it.
  if (sqlite && !statSync(path, { throwIfNoEntry: false })?.isFile())
    throw new UsageError(`--sqlite: no such file: ${store.file}`);
  const name = sqlite ? "SqliteSaver" : "PostgresSaver";
  const Saver = (await loadPackage(PACKAGE + store.kind, `--${store.kind}`, cwd, load))[name] as {
    fromConnString(path: string, options?: Dict): Official;
  };
  let saver: Official | undefined;
  let schema = "";
  try {
    saver = Saver.fromConnString(path, options);
    schema = String(saver.options?.schema ?? "public");
    // The saver's tables must be there: the command never runs its `setup()`.
    if (
      sqlite
        ? !saver.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'").get()
        : !(await saver.pool.query("SELECT to_regclass($1) AS found", [`"${schema.replace(/"/g, '""')}".checkpoints`]))
            .rows[0]?.found
    )
      throw new UsageError(
        `${sqlite ? store.file : `PostgreSQL schema "${schema}"`} has no checkpoints table: not a ${name} database${
          sqlite ? "" : ' (see --saver-options {"schema":...})'
        }`,
      );
  } catch (error) {
    if (saver) await closeSaver(saver).catch(() => {});
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${sqlite ? store.file : "could not connect to PostgreSQL"}: ${(error as Error).message}`);
  }
  return opened(saver, sqlite ? `SQLite ${store.file}` : `PostgreSQL (schema ${schema})`);
}
