import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { findToolCallProblems, type ToolCallRepair } from "langgraph-tool-repair";
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

const llm = await bedrockChat(incidentScript("Flight TP1351 at 08:05."));
const tools = [searchFlights, searchHotels];
const saver = new MemorySaver();
const seen: ToolCallRepair[] = [];
const logger = { info: (repair: ToolCallRepair) => seen.push(repair) };

// #region docs
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { toolCallRepairKit } from "langgraph-tool-repair/langgraph";

const repair = toolCallRepairKit({ onRepair: (r) => logger.info(r) });
const agent = createReactAgent({
  llm: repair.model(llm),
  tools,
  version: "v2", // one task per tool call: a call that finished before an abort keeps its result
  preModelHook: repair.preModelHook,
  checkpointer: repair.checkpointer(saver),
});
// #endregion docs

try {
  await abortWhileHotelsRun(
    agent,
    { messages: [new HumanMessage("A flight to Lisbon and a hotel near Alfama?")] },
    "trip",
  );
  const result = await agent.invoke(
    { messages: [new HumanMessage("Just the flight for now.")] },
    { configurable: { thread_id: "trip" } },
  );
  check(result.messages.at(-1)?.text === "Flight TP1351 at 08:05.", "the Bedrock stub accepted the next request");
  const stored = await storedMessages(saver, "trip");
  check(findToolCallProblems(stored, { level: "structural" }).length === 0, "the stored thread is structurally valid");
  check(
    stored.filter((m) => HumanMessage.isInstance(m)).length === 2,
    "both user messages are stored as sent (no merge)",
  );
  check(
    seen.some((r) => r.action === "synthesized_result"),
    "the abandoned calls are answered and reported",
  );
} finally {
  await closeStubs();
}
