#!/usr/bin/env node
/**
 * The `langgraph-tool-repair` bin. Ctrl-C stops between threads (the ones under way finish, so no thread is
 * left half written); a second Ctrl-C quits at once.
 */
import { startCli } from "./start";

const controller = new AbortController();
process.on("SIGINT", () => {
  if (controller.signal.aborted) process.exit(130);
  process.stderr.write("\nStopping after the threads under way (Ctrl-C again to quit now)...\n");
  controller.abort();
});

const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, signal: controller.signal };
startCli(process.argv.slice(2), io, () => import("./main")).then(
  (code) => {
    process.exitCode = code;
    // Whatever a saver module left open (a pool, a timer) must not keep the command alive.
    setTimeout(() => process.exit(code), 2_000).unref();
  },
  (error) => {
    process.stderr.write(`langgraph-tool-repair: ${error instanceof Error ? error.name : "error"}\n`);
    process.exit(2);
  },
);
