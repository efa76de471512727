import { MemorySaver } from "@langchain/langgraph";
import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const model = await bedrockChat();
const tools = [searchFlights, searchHotels];
const saver = new MemorySaver();
const lines: Record<string, unknown>[] = [];
const logger = { info: (line: Record<string, unknown>) => lines.push(line) };

// #region docs
import { createAgent } from "langchain";
import { toolCallRepair } from "langgraph-tool-repair/langchain";

const repair = toolCallRepair({
  onRepair: (r, { surface, threadId, checkpointNs }) =>
    logger.info({ threadId, checkpointNs, surface, action: r.action, call: r.toolCallId, detail: r.detail }),
});
const agent = createAgent({ model, tools, middleware: [repair.middleware], checkpointer: repair.checkpointer(saver) });
await agent.invoke({ messages: brokenThread() }, { configurable: { thread_id: "trip-42" } });
// #endregion docs

try {
  check(lines.length > 0, "the repairs were reported");
  check(
    lines.every((line) => line.threadId === "trip-42" && line.checkpointNs === ""),
    "each report names the thread and its namespace",
  );
  check(
    lines.some((line) => line.surface === "middleware" && line.action === "synthesized_result"),
    "the hotel search's placeholder is reported by the middleware that stored it",
  );
} finally {
  await closeStubs();
}
