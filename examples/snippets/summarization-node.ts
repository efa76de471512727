import { isSummaryMessage } from "./summarization-detect";
import { HumanMessage } from "@langchain/core/messages";
import { bedrockChat, check, closeStubs, type RunningStub } from "./_support";

// Stands for new ChatBedrockConverse({ model: "us.anthropic.claude-sonnet-4-6-v1:0", region: "us-east-1" }).
let stub: RunningStub | undefined;
const model = await bedrockChat(undefined, {}, {}, (s) => (stub = s));

// #region docs
import { AIMessage } from "@langchain/core/messages";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { summarizationNode } from "langgraph-tool-repair/langgraph";

const graph = new StateGraph(MessagesAnnotation)
  .addNode("summarize", summarizationNode({ model, trigger: { messages: 40 }, keep: { messages: 20 } }))
  .addNode("agent", async (state) => ({ messages: [(await model.invoke(state.messages)) as AIMessage] }))
  .addEdge(START, "summarize")
  .addEdge("summarize", "agent")
  .addEdge("agent", END)
  .compile({ checkpointer: new MemorySaver() });
// #endregion docs

try {
  const config = { configurable: { thread_id: "long" } };
  // A thread of 40 questions and answers (this graph has no tools), then a new question.
  const thread = Array.from({ length: 20 }, (_, i) => [
    new HumanMessage({ content: `Question ${i}?`, id: `h${i}` }),
    new AIMessage({ content: `Answer ${i}.`, id: `a${i}` }),
  ]).flat();
  const result = await graph.invoke(
    { messages: [...thread, new HumanMessage({ content: "And tomorrow?", id: "q" })] },
    config,
  );
  check(
    result.messages.some((m) => isSummaryMessage(m)) && result.messages.length < 41,
    "the summary is stored in place of the prefix",
  );
  check(stub!.rejections.length === 0, "the Bedrock stub accepted the summarized request");
  const short = await graph.invoke(
    { messages: [new HumanMessage("Weather in Paris?")] },
    { configurable: { thread_id: "short" } },
  );
  check(!short.messages.some((m) => isSummaryMessage(m)), "no summary under the trigger");
} finally {
  await closeStubs();
}
