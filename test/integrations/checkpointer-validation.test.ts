/**
 * LangGraph's own conformance suite for checkpointers, run against the wrapped MemorySaver, SqliteSaver and
 * PostgresSaver (PostgreSQL on 127.0.0.1:5432; skipped with the reason when unreachable), and against the bare
 * PostgresSaver, so a failure of the wrapped one can be told from a failure of the saver itself.
 * The suite uses Jest-style globals; this project's vitest does not enable globals, so they are provided
 * before the suite is loaded. Each saver keeps its own name so the suite's known skips for it still apply.
 */
import { MemorySaver } from "@langchain/langgraph";
import type { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { withToolCallRepair } from "../../src/integrations/checkpointer";
import { createPostgresSaver, postgresSkipReason, type PostgresSaverHandle } from "../support/services";

Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it });
const { specTest } = await import("@langchain/langgraph-checkpoint-validation");

describe("withToolCallRepair(MemorySaver)", () => {
  specTest({ checkpointerName: "MemorySaver", createCheckpointer: () => withToolCallRepair(new MemorySaver()) });
});

describe("withToolCallRepair(SqliteSaver)", () => {
  specTest({
    checkpointerName: "@langchain/langgraph-checkpoint-sqlite",
    createCheckpointer: () => withToolCallRepair(SqliteSaver.fromConnString(":memory:")),
    destroyCheckpointer: (saver) => saver.db.close(),
  });
});

const postgresSkip = await postgresSkipReason();

/** A PostgresSaver per set of validations, each on a schema of its own, dropped afterwards. */
function postgresInitializer(wrap: boolean) {
  const handles = new Map<PostgresSaver, PostgresSaverHandle>();
  return {
    checkpointerName: "@langchain/langgraph-checkpoint-postgres",
    createCheckpointer: async () => {
      const handle = await createPostgresSaver(wrap ? "validation_wrapped" : "validation_bare");
      const saver = wrap ? withToolCallRepair(handle.saver) : handle.saver;
      handles.set(saver, handle);
      return saver;
    },
    destroyCheckpointer: async (saver: PostgresSaver) => {
      await handles.get(saver)?.dispose();
      handles.delete(saver);
    },
  };
}

describe.skipIf(postgresSkip !== undefined)(
  `withToolCallRepair(PostgresSaver)${postgresSkip ? ` (skipped: ${postgresSkip})` : ""}`,
  () => {
    specTest(postgresInitializer(true));
  },
);

describe.skipIf(postgresSkip !== undefined)(
  `PostgresSaver, bare${postgresSkip ? ` (skipped: ${postgresSkip})` : ""}`,
  () => {
    specTest(postgresInitializer(false));
  },
);
