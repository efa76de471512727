import { rmSync } from "node:fs";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { findToolCallProblems } from "langgraph-tool-repair";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const model = await bedrockChat();
const tools = [searchFlights, searchHotels];
const removeDatabase = () => ["", "-shm", "-wal"].forEach((suffix) => rmSync(`threads.db${suffix}`, { force: true }));
removeDatabase();

// #region docs
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"; // npm install @langchain/langgraph-checkpoint-sqlite
import { createAgent } from "langchain";
import { toolCallRepair } from "langgraph-tool-repair/langchain";

// model: your chat model (ChatBedrockConverse, ChatOpenAI, ChatAnthropic, ...); tools: your agent's tools.
const repair = toolCallRepair({ onRepair: (r) => console.log(r.action, r.toolCallId ?? "", r.detail) });

const agent = createAgent({
  model, // requests are repaired for its provider
  tools,
  middleware: [repair.middleware],
  checkpointer: repair.checkpointer(SqliteSaver.fromConnString("threads.db")),
});
// #endregion docs

try {
  // The incident as a thread's history: the stub (Bedrock's rules) accepts the repaired request.
  const result = await agent.invoke({ messages: brokenThread() }, { configurable: { thread_id: "t1" } });
  check(AIMessage.isInstance(result.messages.at(-1)), "the Bedrock stub answered");
  const stored = (
    (await agent.getState({ configurable: { thread_id: "t1" } })) as { values: { messages: BaseMessage[] } }
  ).values.messages;
  check(findToolCallProblems(stored, { level: "structural" }).length === 0, "the stored thread is structurally valid");
} finally {
  await closeStubs();
  removeDatabase();
}
