import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { findToolCallProblems, isSyntheticResult, type ToolCallRepair } from "langgraph-tool-repair";
import {
  abortWhileHotelsRun,
  bedrockChat,
  check,
  closeStubs,
  incidentScript,
  searchFlights,
  searchHotels,
  storedMessages,
} from "./_support";

const model = await bedrockChat(incidentScript("Flight TP1351 at 08:05."));
const tools = [searchFlights, searchHotels];
const saver = new MemorySaver();
const seen: ToolCallRepair[] = [];
const logger = { info: (repair: ToolCallRepair) => seen.push(repair) };

// #region docs
import { createAgent } from "langchain";
import { toolCallRepair } from "langgraph-tool-repair/langchain";

const repair = toolCallRepair({ onRepair: (r) => logger.info(r) });
const agent = createAgent({ model, tools, middleware: [repair.middleware], checkpointer: repair.checkpointer(saver) });
// #endregion docs

try {
  // The incident: both searches in parallel, the run aborted while the hotel search runs, then a new message.
  await abortWhileHotelsRun(
    agent,
    { messages: [new HumanMessage("A flight to Lisbon and a hotel near Alfama?")] },
    "trip",
    saver,
  );
  const result = await agent.invoke(
    { messages: [new HumanMessage("Just the flight for now.")] },
    { configurable: { thread_id: "trip" } },
  );
  check(result.messages.at(-1)?.text === "Flight TP1351 at 08:05.", "the Bedrock stub accepted the next request");

  const stored = await storedMessages(saver, "trip");
  check(findToolCallProblems(stored, { level: "structural" }).length === 0, "the stored thread is structurally valid");
  const results = stored.filter((m) => ToolMessage.isInstance(m));
  check(
    results.some((m) => m.content === "TP1351 08:05 to LIS, 142 EUR" && !isSyntheticResult(m)),
    "the finished flight search keeps its real result",
  );
  check(results.filter((m) => isSyntheticResult(m)).length === 1, "only the hotel search gets a placeholder");
  const keys = seen.filter((r) => r.toolCallId).map((r) => `${r.action}:${r.toolCallId}`);
  check(keys.length > 0 && new Set(keys).size === keys.length, "each repair reaches onRepair once");
} finally {
  await closeStubs();
}
