/**
 * The command through `--saver MODULE:EXPORT --saver-options JSON`, with a saver module of the tests' own (a
 * MemorySaver kept in a file), read through the portable `list({})` path.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, it } from "vitest";
import { createFileSaver } from "../threads/support/file-saver";
import { runStoreScenario } from "./support/scenario";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const FILE_SAVER_MODULE = "./test/threads/support/file-saver.ts:createFileSaver";

describe("langgraph-tool-repair --saver", () => {
  it("finds every broken thread in any saver, repairs each on top, and each answers again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tool-repair-saver-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "threads.json");
    const flags = ["--saver", FILE_SAVER_MODULE, "--saver-options", JSON.stringify({ file })];
    await runStoreScenario(
      { flags, open: () => createFileSaver({ file }) },
      "openai",
      { brokenSend: 2, clean: 1, open: 1 },
      cleanups,
    );
  }, 180_000); // seven runs of the command as a process: about a minute on a loaded 2-core machine
});
