// TypeScript consumer: the same checks as checks.cjs, written against the package's types. It is compiled
// under several module settings (see ../tsconfig.*.json; run.mjs copies it to typed.mts and typed.cts for
// nodenext) and the output is run, so types and runtime are checked together. For a consumer without
// langchain, run.mjs removes the `#region langchain` parts first.
import {
  findToolCallProblems,
  repairToolCalls,
  ToolCallRepairInputError,
  type RepairResult,
  type ToolCallRepair,
} from "langgraph-tool-repair";
import { toolCallRepairNode, withToolCallRepair } from "langgraph-tool-repair/langgraph";
// #region langchain
import { promptedStructuredOutputMiddleware, toolCallRepairMiddleware } from "langgraph-tool-repair/langchain";
// #endregion langchain
import { repairThreads, scanThreads, type ThreadReport } from "langgraph-tool-repair/threads";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { ChatResult } from "@langchain/core/outputs";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
// #region langchain
import { createAgent } from "langchain";
import { z } from "zod";
// #endregion langchain

declare const console: { log(...values: unknown[]): void; error(...values: unknown[]): void };
declare const process: { exitCode?: number };

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`check failed: ${what}`);
}

/** A chat model that answers from a script and records what it was sent. */
class ScriptedModel extends BaseChatModel {
  readonly requests: BaseMessage[][] = [];
  constructor(private readonly replies: string[]) {
    super({});
  }
  _llmType(): string {
    return "scripted";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.requests.push(messages);
    const text = this.replies.shift() ?? "done";
    return { generations: [{ message: new AIMessage(text), text }] };
  }
}

function brokenHistory(): BaseMessage[] {
  return [
    new HumanMessage({ id: "u1", content: "Flight and hotel for Lisbon, please." }),
    new AIMessage({
      id: "a1",
      content: "",
      tool_calls: [
        { id: "call_flights", name: "search_flights", args: {}, type: "tool_call" },
        { id: "call_hotels", name: "search_hotels", args: {}, type: "tool_call" },
      ],
    }),
    new ToolMessage({ id: "t1", tool_call_id: "call_flights", name: "search_flights", content: "TP1351 08:05" }),
    new HumanMessage({ id: "u2", content: "Just the flight, please." }),
  ];
}

async function main(): Promise<string[]> {
  const done: string[] = [];

  const result: RepairResult = repairToolCalls(brokenHistory(), { provider: "openai" });
  const synthesized: ToolCallRepair | undefined = result.repairs.find((r) => r.action === "synthesized_result");
  check(synthesized?.toolCallId === "call_hotels", "synthetic result for call_hotels");
  check(findToolCallProblems(result.messages, { provider: "openai" }).length === 0, "no problems after repair");
  done.push("repairToolCalls");

  const seen: number[] = [];
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("repair", toolCallRepairNode({ provider: "openai" }))
    .addNode("agent", async (state: typeof MessagesAnnotation.State) => {
      seen.push(findToolCallProblems(state.messages, { provider: "openai" }).length);
      return { messages: [new AIMessage("ok")] };
    })
    .addEdge(START, "repair")
    .addEdge("repair", "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: withToolCallRepair(new MemorySaver(), { provider: "openai" }) });
  const config = { configurable: { thread_id: "typed-consumer" } };
  await graph.invoke({ messages: brokenHistory() }, config);
  check(seen.length === 1 && seen[0] === 0, "the model node saw a repaired history");
  const stored = (await graph.getState(config)).values.messages as BaseMessage[];
  check(findToolCallProblems(stored, { provider: "openai" }).length === 0, "the stored thread is repaired");
  done.push("toolCallRepairNode + withToolCallRepair");

  const saver = new MemorySaver();
  const store = new StateGraph(MessagesAnnotation)
    .addNode("noop", () => ({}))
    .addEdge(START, "noop")
    .addEdge("noop", END)
    .compile({ checkpointer: saver });
  await store.invoke({ messages: brokenHistory() }, { configurable: { thread_id: "typed-threads" } });
  const statuses = async (): Promise<ThreadReport["status"][]> => {
    const found: ThreadReport["status"][] = [];
    for await (const report of scanThreads(saver, { provider: "openai" })) found.push(report.status);
    return found;
  };
  check((await statuses()).join() === "broken", "scanThreads finds the broken thread");
  for await (const r of repairThreads(saver, { apply: true }))
    check(r.status === "repaired", "repairThreads writes the fix");
  check((await statuses()).join() === "clean", "the thread is clean after the repair");
  done.push("scanThreads + repairThreads");

  // #region langchain
  const model = new ScriptedModel(["Flight TP1351 at 08:05."]);
  const agent = createAgent({ model, tools: [], middleware: [toolCallRepairMiddleware({ provider: "openai" })] });
  await agent.invoke({ messages: brokenHistory() });
  check(
    findToolCallProblems(model.requests[0] ?? [], { provider: "openai" }).length === 0,
    "the model request is repaired",
  );
  done.push("toolCallRepairMiddleware");

  const Weather = z.object({ city: z.string(), celsius: z.number() });
  const structuredAgent = createAgent({
    model: new ScriptedModel(['{"city": "Lisbon", "celsius": 21}']),
    tools: [],
    responseFormat: Weather,
    middleware: [promptedStructuredOutputMiddleware({ strategy: "prompted" })],
  });
  const weather = await structuredAgent.invoke({ messages: [new HumanMessage("Weather in Lisbon?")] });
  const city: string = weather.structuredResponse.city; // typed from responseFormat
  check(city === "Lisbon" && weather.structuredResponse.celsius === 21, "structuredResponse from the answer");
  done.push("promptedStructuredOutputMiddleware");

  // #endregion langchain

  // A bad option is refused with the root entry's class (at run time the node never fails a run).
  const error: unknown = (() => {
    try {
      toolCallRepairNode({ provider: "bedrok" as never });
    } catch (e) {
      return e;
    }
  })();
  check(error instanceof ToolCallRepairInputError, "the same class object in every entry");
  done.push("class identity across entries");
  return done;
}

main().then(
  (done) => console.log(`typed: ${done.join(", ")}`),
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
