/**
 * The bin's first step: `--help` (and no arguments) and `--version` answer without loading anything, and a missing peer package is
 * named with the command that installs it (the command itself needs `@langchain/core` and
 * `@langchain/langgraph-checkpoint`, and a store's saver package, all optional peers of this package).
 */
import { version } from "../../package.json";
import { HELP } from "./args";
import type { Dict } from "../values";
import type { ProgressStream } from "./progress";

/** The package (or module) a failed import names, when the failure is one not found. */
export const missingPackage = (error: unknown) =>
  /^(ERR_)?MODULE_NOT_FOUND$/.test((error as Dict)?.code as string)
    ? /Cannot find (?:package|module) '([^']+)'/.exec((error as Error).message)?.[1]
    : undefined;

/** `io`: main.ts's `CliIO` (not imported: main.ts imports what this file is there to do without). */
export async function startCli<IO extends { stdout: ProgressStream; stderr: ProgressStream }>(
  argv: string[],
  io: IO,
  load: () => Promise<{ runCli(argv: string[], io: IO): Promise<number> }>,
) {
  // No arguments: the help, as a usage error (exit 2); asked for: exit 0.
  if (!argv.length || argv.includes("-h") || argv.includes("--help"))
    return (io.stdout.write(HELP), argv.length ? 0 : 2);
  if (argv.includes("--version")) return (io.stdout.write(`${version}\n`), 0);
  const main = await load().catch((error) => {
    const missing = missingPackage(error);
    if (!missing) throw error;
    io.stderr.write(
      `langgraph-tool-repair: cannot load ${missing}. The command needs @langchain/core and ` +
        "@langchain/langgraph-checkpoint installed beside it: npm install @langchain/core @langchain/langgraph-checkpoint\n",
    );
  });
  return main ? main.runCli(argv, io) : 2;
}
