import { findToolCallProblems } from "langgraph-tool-repair";
import { bedrockChat, check, closeStubs, getWeather, type RunningStub } from "./_support";

// Stands for new ChatBedrockConverse({ model: "us.anthropic.claude-sonnet-4-6-v1:0", region: "us-east-1" }).
let stub: RunningStub | undefined;
const llm = await bedrockChat(undefined, {}, {}, (s) => (stub = s));

// #region docs
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createSupervisor } from "@langchain/langgraph-supervisor";
import {
  composePreModelHooks,
  summarizationHook,
  summarizedMessagesReducer,
  toolCallRepairKit,
} from "langgraph-tool-repair/langgraph";

const repair = toolCallRepairKit({
  // createSupervisor follows one handoff of a step: an unanswered handoff was never followed. Other calls: "" keeps
  // the package's own text.
  syntheticResultText: ({ id, name }) =>
    name?.startsWith("transfer_to_")
      ? `Handoff "${name}" (call ${id}) was not carried out: only one handoff of a step is followed, ` +
        "so no agent ran for this one. Call it again if that agent is still needed."
      : "",
});
const agent = (name: string, prompt: string) =>
  createReactAgent({ name, prompt, llm: repair.model(llm), tools: [getWeather], preModelHook: repair.preModelHook });

const graph = createSupervisor({
  agents: [agent("weather", "You answer weather questions."), agent("travel", "You plan trips.")],
  llm: repair.model(llm),
  prompt: "You are the supervisor: hand each question to the agent that can answer it.",
  // The parent graph takes the list the supervisor summarized as a replacement (what was summarized leaves it).
  stateSchema: Annotation.Root({
    messages: Annotation<BaseMessage[]>({ reducer: summarizedMessagesReducer, default: () => [] }),
  }),
  // Summarize once the supervisor's request would pass 4,000 tokens (oversized results shortened in the request
  // first), then repair what the model is sent.
  preModelHook: composePreModelHooks(
    summarizationHook({ model: llm, trigger: { tokens: 4_000 }, keep: { messages: 6 } }),
    repair.preModelHook,
  ),
}).compile({ checkpointer: repair.checkpointer(new MemorySaver()) });

const config = { configurable: { thread_id: "ops-7" } };
const result = await graph.invoke({ messages: [new HumanMessage("Weather in Paris?")] }, config);
console.log(result.messages.at(-1)?.text);
// #endregion docs

try {
  check(result.messages.at(-1)?.text === "ok", "the supervisor answered");
  check(findToolCallProblems(result.messages, { level: "structural" }).length === 0, "the stored thread is valid");
  check(stub!.rejections.length === 0, "every request is accepted by the Bedrock stub");
} finally {
  await closeStubs();
}
