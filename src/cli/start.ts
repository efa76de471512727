/**
 * The bin's first step: `--help` answers without loading anything, and a missing peer package is named with
 * the command that installs it (the command itself needs `@langchain/core` and
 * `@langchain/langgraph-checkpoint`, and a store's saver package, all optional peers of this package).
 */
import { HELP } from "./args";
import type { CliIO } from "./main";

/** The package a failed import names, when the failure is a missing package. */
export function missingPackage(error: unknown): string | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
    return /Cannot find (?:package|module) '([^']+)'/.exec(String(message))?.[1];
}

export async function startCli(
  argv: string[],
  io: CliIO,
  load: () => Promise<{ runCli(argv: string[], io: CliIO): Promise<number> }>,
): Promise<number> {
  if (argv.includes("-h") || argv.includes("--help")) return (io.stdout.write(HELP), 0);
  let main: Awaited<ReturnType<typeof load>>;
  try {
    main = await load();
  } catch (error) {
    const missing = missingPackage(error);
    if (missing === undefined) throw error;
    io.stderr.write(
      `langgraph-tool-repair: cannot load ${missing}. The command needs @langchain/core and ` +
        "@langchain/langgraph-checkpoint installed beside it: npm install @langchain/core @langchain/langgraph-checkpoint\n",
    );
    return 2;
  }
  return main.runCli(argv, io);
}
