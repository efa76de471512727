import { findToolCallProblems } from "langgraph-tool-repair";
import { isSummaryMessage } from "./summarization-detect";
import { bedrockChat, check, closeStubs, getWeather, longThread, type RunningStub } from "./_support";

// Stands for new ChatBedrockConverse({ model: "us.anthropic.claude-sonnet-4-6-v1:0", region: "us-east-1" }).
let stub: RunningStub | undefined;
const llm = await bedrockChat(undefined, {}, {}, (s) => (stub = s));
const log = console.log;
const printed: unknown[] = [];
console.log = (...args: unknown[]) => printed.push(...args);

// #region docs
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { composePreModelHooks, summarizationHook, toolCallRepairKit } from "langgraph-tool-repair/langgraph";

const repair = toolCallRepairKit();
const agent = createReactAgent({
  llm: repair.model(llm),
  tools: [getWeather],
  prompt: "You are a travel assistant.",
  preModelHook: composePreModelHooks(
    // First: past 40 messages, summarize all but the last 20 (stored in `messages`).
    summarizationHook({ model: llm, trigger: { messages: 40 }, keep: { messages: 20 } }),
    // Last: repair what the model sees (`llmInputMessages`), from the summarized list.
    repair.preModelHook,
  ),
  checkpointer: repair.checkpointer(new MemorySaver()),
});

const config = { configurable: { thread_id: "trip-42" } };
const result = await agent.invoke({ messages: [new HumanMessage("Weather in Paris and Rome?")] }, config);
console.log(result.messages.at(-1)?.text);
// #endregion docs

try {
  console.log = log;
  check(printed[0] === "ok", "the agent answered");
  const long = { configurable: { thread_id: "long" } };
  const answer = await agent.invoke(
    { messages: [...longThread(10), new HumanMessage({ content: "And tomorrow?", id: "q" })] },
    long,
  );
  check(
    answer.messages.some((m) => isSummaryMessage(m)) && answer.messages.length < 41,
    "the thread is summarized and stored shorter",
  );
  check(findToolCallProblems(answer.messages, { level: "structural" }).length === 0, "the stored thread is valid");
  check(stub!.rejections.length === 0, "every request is accepted by the Bedrock stub");
} finally {
  console.log = log;
  await closeStubs();
}
