// Prints what an orphan result becomes (docs/engine.md shows this output).
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { repairToolCalls } from "langgraph-tool-repair";
import { check } from "./_support";

const { messages } = repairToolCalls(
  [
    new HumanMessage({ id: "u1", content: "Any flight to Lisbon?" }),
    new ToolMessage({ id: "t9", tool_call_id: "call_9", name: "search_flights", content: "TP1351 08:05, 142 EUR" }),
  ],
  { provider: "openai" },
);
const converted = messages.find((m) => m.id === "t9");
check(HumanMessage.isInstance(converted), "the orphan result became a user message with the result's id");
console.log(converted.content);
