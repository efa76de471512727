import { findToolCallProblems } from "langgraph-tool-repair";
import { isSummaryMessage } from "./summarization-detect";
import { bedrockChat, check, closeStubs, getWeather, longThread, type RunningStub } from "./_support";

// Stands for new ChatBedrockConverse({ model: "us.anthropic.claude-sonnet-4-6-v1:0", region: "us-east-1" }).
let stub: RunningStub | undefined;
const model = await bedrockChat(undefined, {}, {}, (s) => (stub = s));
const log = console.log;
const printed: unknown[] = [];
console.log = (...args: unknown[]) => printed.push(...args);

// #region docs
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { summarizationMiddleware, toolCallRepair } from "langgraph-tool-repair/langchain";

const repair = toolCallRepair();
const agent = createAgent({
  model,
  tools: [getWeather],
  systemPrompt: "You are a travel assistant.",
  middleware: [
    // Before each model call, once the thread holds 40 messages or 60,000 tokens: summarize all but the last
    // 20 messages (never splitting a call from its results) and store summary + kept messages.
    summarizationMiddleware({
      model, // the summarizer: any chat model, or a "provider:model" string
      trigger: [{ messages: 40 }, { tokens: 60_000 }],
      keep: { messages: 20 },
    }),
    // Repairs a stored thread on new input and repairs every model request for the model's provider.
    repair.middleware,
  ],
  checkpointer: repair.checkpointer(new MemorySaver()),
});

const config = { configurable: { thread_id: "trip-42" } };
const result = await agent.invoke({ messages: [new HumanMessage("Weather in Paris and Rome?")] }, config);
console.log(result.messages.at(-1)?.text);
// #endregion docs

try {
  console.log = log;
  check(printed[0] === "ok", "the agent answered");
  // A thread past the trigger: summarized before the model call, the summary stored.
  const long = { configurable: { thread_id: "long" } };
  const answer = await agent.invoke(
    { messages: [...longThread(10), new HumanMessage({ content: "And tomorrow?", id: "q" })] },
    long,
  );
  const stored = answer.messages;
  check(stored.some((m) => isSummaryMessage(m)) && stored.length < 41, "the thread is summarized and stored shorter");
  check(findToolCallProblems(stored, { level: "structural" }).length === 0, "the stored thread is valid");
  check(stub!.rejections.length === 0, "every request is accepted by the Bedrock stub");
} finally {
  console.log = log;
  await closeStubs();
}
