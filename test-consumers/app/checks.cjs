// The checks every consumer runs, on the modules it loaded its own way (ESM `import` in esm.mjs, CommonJS
// `require` in cjs.cjs): each entry point of the package, a repair by the engine, the StateGraph node with
// the checkpointer wrapper, the thread tools over a saver, the createAgent middleware, prompted structured output, and one class identity
// across entries. No network: the model is a scripted chat model defined here.
"use strict";
const assert = require("node:assert/strict");

/** A chat model that answers from a script and records what it was sent. */
function scriptedModelClass(BaseChatModel, AIMessage) {
  return class ScriptedModel extends BaseChatModel {
    constructor(replies) {
      super({});
      this.replies = replies;
      this.requests = [];
    }
    _llmType() {
      return "scripted";
    }
    bindTools() {
      return this;
    }
    async _generate(messages) {
      this.requests.push(messages);
      const reply = this.replies.shift() ?? "done";
      const message = typeof reply === "string" ? new AIMessage(reply) : reply;
      return { generations: [{ message, text: typeof reply === "string" ? reply : "" }] };
    }
  };
}

/** The incident: two parallel calls, one answered, then a new user message (every provider rejects it). */
function brokenHistory({ HumanMessage, AIMessage, ToolMessage }) {
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

async function runChecks(m) {
  const { root, langgraph, threads, langchain, messages: core, chatModels, graph: lg, langchainPkg, zod } = m;
  const ScriptedModel = scriptedModelClass(chatModels.BaseChatModel, core.AIMessage);
  const done = [];

  // 1. The engine (root entry): a broken history is repaired, and the result has no problems left.
  const broken = brokenHistory(core);
  assert.ok(root.findToolCallProblems(broken, { provider: "openai" }).length > 0);
  const { messages: repaired, repairs } = root.repairToolCalls(broken, { provider: "openai" });
  assert.ok(
    repairs.some((r) => r.action === "synthesized_result" && r.toolCallId === "call_hotels"),
    "synthetic result for call_hotels",
  );
  assert.deepEqual(root.findToolCallProblems(repaired, { provider: "openai" }), []);
  done.push("repairToolCalls");

  // 2. /langgraph: the node in a StateGraph, threads in a wrapped MemorySaver; the model sees a valid history.
  const seen = [];
  const app = new lg.StateGraph(lg.MessagesAnnotation)
    .addNode("repair", langgraph.toolCallRepairNode({ provider: "openai" }))
    .addNode("agent", async (state) => {
      seen.push(root.findToolCallProblems(state.messages, { provider: "openai" }).length);
      return { messages: [new core.AIMessage("ok")] };
    })
    .addEdge(lg.START, "repair")
    .addEdge("repair", "agent")
    .addEdge("agent", lg.END)
    .compile({ checkpointer: langgraph.withToolCallRepair(new lg.MemorySaver(), { provider: "openai" }) });
  const config = { configurable: { thread_id: "consumer-node" } };
  await app.invoke({ messages: brokenHistory(core) }, config);
  assert.deepEqual(seen, [0], "the model node saw a repaired history");
  const stored = (await app.getState(config)).values.messages;
  assert.deepEqual(root.findToolCallProblems(stored, { provider: "openai" }), [], "the stored thread is repaired");
  done.push("toolCallRepairNode + withToolCallRepair");

  // 3. /threads: a broken thread stored by a plain MemorySaver is found, repaired on top, and then clean.
  const saver = new lg.MemorySaver();
  const store = new lg.StateGraph(lg.MessagesAnnotation)
    .addNode("noop", () => ({}))
    .addEdge(lg.START, "noop")
    .addEdge("noop", lg.END)
    .compile({ checkpointer: saver });
  await store.invoke({ messages: brokenHistory(core) }, { configurable: { thread_id: "consumer-threads" } });
  const statuses = async () => {
    const found = [];
    for await (const report of threads.scanThreads(saver, { provider: "openai" })) found.push(report.status);
    return found;
  };
  assert.deepEqual(await statuses(), ["broken"], "scanThreads finds the broken thread");
  const written = [];
  for await (const r of threads.repairThreads(saver, { apply: true })) written.push(r.status);
  assert.deepEqual(written, ["repaired"], "repairThreads writes the fix");
  assert.deepEqual(await statuses(), ["clean"], "the thread is clean after the repair");
  done.push("scanThreads + repairThreads");

  if (!langchainPkg) return done; // a consumer without langchain: root, /langgraph and /threads only

  // 4. /langchain: the middleware in createAgent; the model request is repaired.
  const model = new ScriptedModel(["Flight TP1351 at 08:05."]);
  const agent = langchainPkg.createAgent({
    model,
    tools: [],
    middleware: [langchain.toolCallRepairMiddleware({ provider: "openai" })],
  });
  const result = await agent.invoke({ messages: brokenHistory(core) });
  assert.equal(model.requests.length, 1);
  assert.deepEqual(
    root.findToolCallProblems(model.requests[0], { provider: "openai" }),
    [],
    "the model request is repaired",
  );
  assert.equal(result.messages.at(-1).content, "Flight TP1351 at 08:05.");
  done.push("toolCallRepairMiddleware");

  // 5. /langchain: prompted structured output fills structuredResponse from the answer's JSON.
  const Weather = zod.object({ city: zod.string(), celsius: zod.number() });
  const structuredModel = new ScriptedModel(['{"city": "Lisbon", "celsius": 21}']);
  const structuredAgent = langchainPkg.createAgent({
    model: structuredModel,
    tools: [],
    responseFormat: Weather,
    middleware: [langchain.promptedStructuredOutputMiddleware({ strategy: "prompted" })],
  });
  const weather = await structuredAgent.invoke({ messages: [new core.HumanMessage("Weather in Lisbon?")] });
  assert.deepEqual(weather.structuredResponse, { city: "Lisbon", celsius: 21 });
  done.push("promptedStructuredOutputMiddleware");

  // 6. One class across entries: /langgraph's node refuses a bad option with the root entry's
  // ToolCallRepairInputError (at run time the node never fails a run: it reports and lets the history through).
  const error = (() => {
    try {
      langgraph.toolCallRepairNode({ provider: "bedrok" });
    } catch (e) {
      return e;
    }
  })();
  assert.ok(error instanceof root.ToolCallRepairInputError, "the same class object in every entry");
  done.push("class identity across entries");
  return done;
}

module.exports = { runChecks };
