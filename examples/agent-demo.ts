/**
 * The same incident inside a real agent: langchain `createAgent` on the real ChatBedrockConverse (against the
 * local Bedrock stub), threads stored in SQLite. Run 1 calls two tools in parallel and is aborted while the
 * hotel search is still running (the flight search has finished); run 2 is a new user message in the same
 * thread. Without this package run 2 is rejected by Bedrock, and so is every later run of the thread. With
 * `toolCallRepair()` (its middleware in the agent, its checkpointer wrapper around the saver), run 2 succeeds:
 * its request already carries the flight search's real result (and, for the hotel search, a placeholder saying
 * its outcome is unknown), and the stored thread is structurally valid and keeps that real result. The stub's
 * model answers from the request it received (examples/sent.ts), and run 2's request is printed as sent.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { z } from "zod";
import { printWrapped } from "./print";
import { answerFromRequest, describeSent } from "./sent";
import { findToolCallProblems, isSyntheticResult, parseToolPairingError, repairMarkerOf } from "../src/index";
import { toolCallRepair } from "../src/langchain";
import { bedrockModel, startBedrockStub, type RunningStub } from "../test/support/stubs";

type Dict = Record<string, unknown>;

/** The model: two parallel calls for the first request of a thread, then an answer from what it was sent. */
function agentScript(request: unknown) {
  const messages = (request as Dict).messages as Dict[];
  return messages.length > 1
    ? { text: answerFromRequest(request) }
    : {
        toolCalls: [
          { name: "search_flights", args: { to: "LIS" } },
          { name: "search_hotels", args: { near: "Alfama" } },
        ],
      };
}

function tools(abort: AbortController) {
  let flightsDone = false;
  const searchFlights = tool(
    async () => {
      flightsDone = true;
      return "TP1351 08:05, 142 EUR";
    },
    { name: "search_flights", description: "Search flights", schema: z.object({ to: z.string() }) },
  );
  const searchHotels = tool(
    async (_input, config) => {
      // The user cancels while this search runs (after the flight search has returned).
      while (!flightsDone) await new Promise((r) => setTimeout(r, 5));
      setTimeout(() => abort.abort(), 20);
      await new Promise((_, reject) => config?.signal?.addEventListener("abort", () => reject(new Error("cancelled"))));
      return "never";
    },
    { name: "search_hotels", description: "Search hotels", schema: z.object({ near: z.string() }) },
  );
  return [searchFlights, searchHotels];
}

async function runIncident(
  label: string,
  threadId: string,
  stub: RunningStub,
  saver: BaseCheckpointSaver,
  repaired: boolean,
): Promise<boolean> {
  const abort = new AbortController();
  const repair = toolCallRepair();
  const agent = createAgent({
    model: bedrockModel(stub),
    tools: tools(abort),
    checkpointer: repaired ? repair.checkpointer(saver) : saver,
    middleware: repaired ? [repair.middleware] : [],
  });
  const config = { configurable: { thread_id: threadId } };
  console.log(`\n${label}`);
  try {
    await agent.invoke(
      { messages: [{ role: "user", content: "Flight to Lisbon and a hotel near Alfama, please." }] },
      { ...config, signal: abort.signal },
    );
  } catch {
    console.log("  run 1: cancelled by the user while search_hotels was running (search_flights had finished)");
  }
  let answer: string;
  try {
    const result = await agent.invoke({ messages: [{ role: "user", content: "Just the flight for now." }] }, config);
    answer = String((result.messages[result.messages.length - 1] as BaseMessage).content);
    printWrapped("  run 2: accepted: ", answer, 4);
    // What the model was sent in run 2 itself.
    console.log("    run 2's request as sent:");
    for (const line of describeSent(stub.requests.at(-1))) printWrapped("      ", line, 19);
  } catch (error) {
    printWrapped("  run 2: rejected: ", (error as Error).message, 4);
    // Which tools the rejected ids belong to: the calls of the stored thread.
    const names = new Map<string, string>();
    for (const m of (await agent.graph.getState(config)).values.messages as BaseMessage[])
      if (AIMessage.isInstance(m)) for (const c of m.tool_calls ?? []) if (c.id) names.set(c.id, c.name);
    const ids = parseToolPairingError(error)?.toolCallIds ?? [];
    if (ids.length > 0)
      printWrapped(
        "    ",
        "the rejected ids are the calls of " +
          `${ids.map((id) => names.get(id) ?? "an unknown tool").join(" and ")}: the finished flight ` +
          "search's result was thrown away",
        4,
      );
    return false;
  }
  const stored = (await agent.graph.getState(config)).values.messages as BaseMessage[];
  for (const m of stored) {
    if (ToolMessage.isInstance(m))
      console.log(
        `    stored result for ${m.name}: ${isSyntheticResult(m) ? `placeholder (${repairMarkerOf(m)?.toolRun})` : `real: "${m.content}"`}`,
      );
    else if (AIMessage.isInstance(m) && m.tool_calls?.length)
      console.log(`    stored call message: ${m.tool_calls.map((c) => c.name).join(" + ")}`);
  }
  // Storage holds structural repairs only; Bedrock's own shaping (turn alternation) is done per request.
  const structural = findToolCallProblems(stored, { level: "structural", trailingIsProblem: false }).length;
  console.log(
    "    stored thread: " +
      `${structural === 0 ? "structurally valid" : `${structural} structural problem(s)`} (Bedrock's ` +
      "turn shaping is added per request, never stored)",
  );
  // The model was really sent the flight search's result: its answer, made from its request, quotes it.
  return structural === 0 && answer.includes("TP1351 08:05, 142 EUR");
}

/** Where the thread broken without this package is kept, for `langgraph-tool-repair scan` (docs/cli.md). */
export const DEMO_THREADS_DB = ".tmp/demo-threads.sqlite";

/** A fresh SQLite file at DEMO_THREADS_DB (relative to the repository). */
function demoThreadsSaver(): SqliteSaver {
  const file = fileURLToPath(new URL(`../${DEMO_THREADS_DB}`, import.meta.url));
  mkdirSync(dirname(file), { recursive: true });
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
  return SqliteSaver.fromConnString(file);
}

export async function agentDemo(): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), "tool-repair-demo-"));
  const stub = await startBedrockStub({ script: agentScript });
  const plain = demoThreadsSaver();
  try {
    const without = await runIncident(
      "Without this package (SqliteSaver, no middleware), thread trip-without",
      "trip-without",
      stub,
      plain,
      false,
    );
    const withRepair = await runIncident(
      "With toolCallRepair(): its middleware in the agent, its checkpointer around the SqliteSaver, thread trip-with",
      "trip-with",
      stub,
      SqliteSaver.fromConnString(join(dir, "repaired.db")),
      true,
    );
    return !without && withRepair;
  } finally {
    await stub.close();
    plain.db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
