/**
 * The command on a PostgresSaver database (a schema of its own, dropped after), seeded by real createAgent /
 * createReactAgent runs on ChatBedrockConverse against the stub. Skips with the reason when PostgreSQL is
 * unreachable, fails instead under LGTR_REQUIRE_SERVICES=1.
 */
import { afterEach, describe, it } from "vitest";
import { POSTGRES_URL, postgresSaverOrSkip } from "../support/services";
import { runStoreScenario } from "./support/scenario";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("langgraph-tool-repair on PostgreSQL", () => {
  it("finds every thread broken by an aborted run and a new message, repairs each on top, and each answers again", async (context) => {
    const handle = await postgresSaverOrSkip(context, "cli");
    const flags = ["--postgres", POSTGRES_URL, "--saver-options", JSON.stringify({ schema: handle.schema })];
    await runStoreScenario(
      { flags, open: () => handle.reopen() },
      "bedrock",
      { brokenSend: 2, brokenReact: 1, clean: 1, open: 1 },
      cleanups,
    );
  }, 180_000); // seven runs of the command as a process: about a minute on a loaded 2-core machine
});
