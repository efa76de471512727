/**
 * Graphs the local Agent Server deploys for test/threads/api.test.ts, WITHOUT langgraph-tool-repair: a langchain
 * createAgent graph and a StateGraph + ToolNode graph, both on the real ChatOpenAI pointed at the strict stub whose
 * URL the test passes in LGTR_STUB_URL. The tools take `ms` to finish, so a test can break a run mid-tools. `counter`
 * is a graph whose state has no messages.
 */
import { tool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { Annotation, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { z } from "zod";

const model = new ChatOpenAI({
  model: "gpt-4.1-mini",
  apiKey: "sk-test",
  maxRetries: 0,
  configuration: { baseURL: `${process.env.LGTR_STUB_URL}/v1` },
});

const wait = tool(
  async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return `waited ${ms} ms`;
  },
  { name: "wait", description: "Waits ms milliseconds.", schema: z.object({ ms: z.number() }) },
);

export const agent = createAgent({ model, tools: [wait] });

const tools = new ToolNode([wait]);
export const toolnode = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (state) => ({ messages: [await model.bindTools([wait]).invoke(state.messages)] }))
  .addNode("tools", tools)
  .addEdge("__start__", "agent")
  .addConditionalEdges("agent", (state) => {
    const last = state.messages.at(-1) as { tool_calls?: unknown[] };
    return last.tool_calls?.length ? "tools" : "__end__";
  })
  .addEdge("tools", "agent")
  .compile();

const Counter = Annotation.Root({ count: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });
export const counter = new StateGraph(Counter)
  .addNode("add", () => ({ count: 1 }))
  .addEdge("__start__", "add")
  .compile();
