import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { findToolCallProblems } from "langgraph-tool-repair";
import { toolCallRepairHook } from "langgraph-tool-repair/langgraph";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const llm = await bedrockChat([{ text: "Flight TP1351 at 08:05." }]);
const tools = [searchFlights, searchHotels];
const checkpointer = new MemorySaver();

// #region docs
const agent = createReactAgent({
  llm,
  tools,
  preModelHook: toolCallRepairHook({ model: llm, persist: true }),
  checkpointer,
});
// #endregion docs

try {
  const config = { configurable: { thread_id: "hook-snippet" } };
  const result = await agent.invoke({ messages: brokenThread() }, config);
  check(
    result.messages.at(-1)?.text === "Flight TP1351 at 08:05.",
    "the Bedrock stub accepted the request shaped through llmInputMessages",
  );
  const stored = (await agent.getState(config)).values.messages;
  check(findToolCallProblems(stored, { level: "structural" }).length === 0, "persist: true stored the structural fix");
} finally {
  await closeStubs();
}
