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
import { sqlStoreOf } from "../threads/source";
import type { Dict } from "../values";
import { UsageError, type CliArgs } from "./args";
import { missingPackage } from "./start";

export type ModuleImporter = (specifier: string, cwd: string) => Promise<Dict>;

const isPath = (specifier: string) => specifier.startsWith(".") || isAbsolute(specifier);
/** Whether an import of `specifier` failed for that package not being installed (not for one it imports). */
const packageMissing = (specifier: string, error: unknown) => !isPath(specifier) && missingPackage(error) === specifier;

/** Imports a package as the CLI's own dependency, else from the project in `cwd` (an `npx` run lives elsewhere). */
export const importModule: ModuleImporter = (specifier, cwd) =>
  import(isPath(specifier) ? pathToFileURL(resolve(cwd, specifier)).href : specifier).catch((error) => {
    if (!packageMissing(specifier, error)) throw error;
    return import(pathToFileURL(createRequire(join(cwd, "package.json")).resolve(specifier)).href);
  });

/** Closes what the saver holds open: a pg pool (`end`), a better-sqlite3 connection (`db.close`), or `close`. */
export const closeSaver = async (saver: object) => {
  const s = saver as { end?(): unknown; close?(): unknown; db?: { open?: boolean; close?(): unknown } };
  await (s.end ? s.end() : s.close ? s.close() : s.db?.open && s.db.close?.());
};

/** The saver of the store the command line names, and a label of it that is safe to print. */
export async function openStore(
  { store, saverOptions: options }: Pick<CliArgs, "store" | "saverOptions">,
  importer = importModule,
) {
  const cwd = process.cwd();
  const load = (specifier: string, flag: string) =>
    importer(specifier, cwd).catch((error) => {
      throw new UsageError(
        packageMissing(specifier, error)
          ? `${flag} needs the package ${specifier}, which is not installed. Install it with: npm install ${specifier}`
          : `${flag}: could not load ${specifier}: ${error.message}`,
      );
    });
  if (store.kind === "saver") {
    const { module, exportName: name = "default" } = store;
    const flag = `--saver ${module}`;
    const value = (await load(module, "--saver"))[name];
    let saver = value as Partial<BaseCheckpointSaver>;
    try {
      // A class (its prototype reads checkpoints) is constructed; any other function is a factory.
      if (typeof value === "function")
        saver = value.prototype?.getTuple ? new (value as new (o: unknown) => object)(options) : await value(options);
    } catch (error) {
      throw new UsageError(`${flag}: creating the saver failed: ${(error as Error).message}`);
    }
    if (SAVER_METHODS.some((method) => typeof saver?.[method] !== "function"))
      throw new UsageError(`${flag}: export "${name}" is not a checkpoint saver, a factory of one, or a saver class`);
    return { saver: saver as BaseCheckpointSaver, label: `${module}${store.exportName ? `:${name}` : ""}` };
  }

  const sqlite = store.kind === "sqlite";
  const path = sqlite ? resolve(cwd, store.file) : store.url;
  // Opening a missing file would create an empty database, and the saver would create its tables in it.
  const found = sqlite && statSync(path, { throwIfNoEntry: false });
  if (found !== false && !found?.isFile())
    throw new UsageError(`--sqlite: ${found ? "a directory, not a SQLite file" : "no such file"}: ${store.file}`);
  const name = sqlite ? "SqliteSaver" : "PostgresSaver";
  const Saver = (await load(`@langchain/langgraph-checkpoint-${store.kind}`, `--${store.kind}`))[name] as {
    fromConnString(path: string, options?: Dict): BaseCheckpointSaver;
  };
  // PostgresSaver's own default.
  const schema = String(options?.schema ?? "public");
  let saver: BaseCheckpointSaver | undefined;
  try {
    saver = Saver.fromConnString(path, options);
    // The saver's tables must be there: the command never runs its `setup()`.
    if (!(await sqlStoreOf(saver)?.found()))
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
  return { saver, label: sqlite ? `SQLite ${store.file}` : `PostgreSQL (schema ${schema})` };
}
