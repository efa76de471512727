import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { findToolCallProblems, isSyntheticResult } from "langgraph-tool-repair";
import {
  abortWhileHotelsRun,
  bedrockChat,
  check,
  closeStubs,
  incidentScript,
  searchFlights,
  searchHotels,
  storedMessages,
  type RunningStub,
} from "./_support";

const Findings = z.object({ flight: z.string(), hotel: z.string().optional() });
let stub: RunningStub | undefined;
const model = await bedrockChat(
  incidentScript('{"flight":"TP1351 08:05"}'),
  { model: "meta.llama3-1-70b-instruct-v1:0" },
  {},
  (s) => (stub = s),
);
const tools = [searchFlights, searchHotels];
const saver = new MemorySaver();

// #region docs
import { createAgent } from "langchain";
import { promptedStructuredOutputMiddleware, toolCallRepair } from "langgraph-tool-repair/langchain";

const repair = toolCallRepair();
const agent = createAgent({
  model, // e.g. ChatBedrockConverse with "meta.llama3-1-70b-instruct-v1:0" (no tool_choice)
  tools,
  responseFormat: Findings,
  middleware: [repair.middleware, promptedStructuredOutputMiddleware()],
  checkpointer: repair.checkpointer(saver), // a MemorySaver, a SqliteSaver, ...
});
// #endregion docs

try {
  const config = { configurable: { thread_id: "findings" } };
  await abortWhileHotelsRun(
    agent,
    { messages: [new HumanMessage("A flight to Lisbon and a hotel near Alfama?")] },
    "findings",
    saver,
  );
  const result = await agent.invoke({ messages: [new HumanMessage("Just the flight for now.")] }, config);
  check(stub!.rejections.length === 0, "every request is accepted");
  check(result.structuredResponse.flight === "TP1351 08:05", "structuredResponse is the validated answer");
  const stored = await storedMessages(saver, "findings");
  check(findToolCallProblems(stored, { level: "structural" }).length === 0, "the stored thread is structurally valid");
  const flight = stored.find((m) => ToolMessage.isInstance(m) && m.name === "search_flights");
  check(flight !== undefined && !isSyntheticResult(flight), "the finished flight search keeps its real result");
} finally {
  await closeStubs();
}
