/**
 * LangGraph's own conformance suite for checkpointers, run against the wrapped MemorySaver and SqliteSaver.
 * The suite uses Jest-style globals; this project's vitest does not enable globals, so they are provided
 * before the suite is loaded. Each saver keeps its own name so the suite's known skips for it still apply.
 */
import { MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { withToolCallRepair } from "../../src/integrations/checkpointer";

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
