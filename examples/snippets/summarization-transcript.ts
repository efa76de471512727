// Prints the transcript docs/summarization.md shows.
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { messagesToTranscript } from "langgraph-tool-repair";

console.log(
  messagesToTranscript([
    new HumanMessage("Weather in Paris and Rome?"),
    new AIMessage({
      content: "",
      tool_calls: [
        { id: "call_p", name: "get_weather", args: { city: "Paris" }, type: "tool_call" },
        { id: "call_r", name: "get_weather", args: { city: "Rome" }, type: "tool_call" },
      ],
    }),
    new ToolMessage({ tool_call_id: "call_r", name: "get_weather", content: "18C, sunny" }),
    new ToolMessage({ tool_call_id: "call_p", name: "get_weather", content: "timeout", status: "error" }),
  ]),
);
