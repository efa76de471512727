/** The command on a SqliteSaver file seeded by real createAgent / createReactAgent runs (ChatOpenAI against the stub). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, it } from "vitest";
import { runStoreScenario } from "./support/scenario";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("langgraph-tool-repair on SQLite", () => {
  it("finds every thread broken by an aborted run and a new message, repairs each on top, and each answers again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tool-repair-cli-"));
    const file = join(dir, "threads.sqlite");
    const opened: SqliteSaver[] = [];
    cleanups.push(() => {
      for (const saver of opened) if (saver.db.open) saver.db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const open = () => {
      const saver = SqliteSaver.fromConnString(file);
      opened.push(saver);
      return saver;
    };
    await runStoreScenario(
      { flags: ["--sqlite", file], open },
      "openai",
      { brokenSend: 2, brokenReact: 1, clean: 1, open: 1 },
      cleanups,
    );
  }, 180_000); // seven runs of the command as a process: about a minute on a loaded 2-core machine
});
