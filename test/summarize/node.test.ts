import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, MemorySaver, MessagesAnnotation, messagesStateReducer, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  buildSummaryMessages,
  DEFAULT_ACKNOWLEDGEMENT,
  DEFAULT_SUMMARY_PREFIX,
  isSummaryMessage,
  summarizeHistory,
  type SummarizationOptions,
  type SummarizationTrigger,
} from "../../src/summarize/summarize";
import { summarizationHook, summarizationNode } from "../../src/integrations/summarization";
import { summarizationMiddleware } from "../../src/integrations/summarization-middleware";
import { ToolCallRepairInputError } from "../../src/errors";
import { validatePayloadFor } from "../support/payloads";
import { HistoryBuilder, historyArb, turnArb } from "./histories";
import { RecordingSummarizer, ScriptedToolModel } from "./fakes";
import { problemsEverywhere } from "./validity";

const call = (id: string, name = "search") => ({ id, name, args: { q: id }, type: "tool_call" as const });
const text = (m: BaseMessage) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

describe("buildSummaryMessages", () => {
  it("is one user message when the tail opens with an assistant message", () => {
    const built = buildSummaryMessages("they talked", [new AIMessage({ content: "", tool_calls: [call("a")] })]);
    expect(built).toHaveLength(1);
    expect(built[0].getType()).toBe("human");
    expect(text(built[0])).toBe(`${DEFAULT_SUMMARY_PREFIX}\n\nthey talked`);
    expect(isSummaryMessage(built[0])).toBe(true);
  });

  it("adds an assistant turn when the tail opens with a user message, so roles alternate", () => {
    const built = buildSummaryMessages("s", [new HumanMessage("next")]);
    expect(built.map((m) => m.getType())).toEqual(["human", "ai"]);
    expect(text(built[1])).toBe(DEFAULT_ACKNOWLEDGEMENT);
    expect(built.every(isSummaryMessage)).toBe(true);
  });

  it("never writes an empty message", () => {
    expect(text(buildSummaryMessages("  ", [])[0])).toMatch(/returned no text/);
  });
});

const conversation = (): BaseMessage[] => [
  new SystemMessage("sys"),
  new HumanMessage("Weather in Paris and Rome?"),
  new AIMessage({ content: "", tool_calls: [call("call_p", "get_weather"), call("call_r", "get_weather")] }),
  new ToolMessage({ content: "rain", tool_call_id: "call_p", name: "get_weather" }),
  new ToolMessage({ content: "sun", tool_call_id: "call_r", name: "get_weather" }),
  new AIMessage("Paris rain, Rome sun."),
  new HumanMessage("And Oslo?"),
];

describe("summarizeHistory", () => {
  it("does nothing under the threshold", async () => {
    const model = new RecordingSummarizer();
    expect(
      await summarizeHistory(conversation(), { model, trigger: { messages: 8 }, keep: { messages: 2 } }),
    ).toBeUndefined();
    expect(model.prompts).toEqual([]);
  });

  it("over the threshold returns system + summary + tail, and the prompt keeps parallel calls apart", async () => {
    const model = new RecordingSummarizer();
    const messages = conversation();
    const next = await summarizeHistory(messages, { model, trigger: { messages: 6 }, keep: { messages: 2 } });
    expect(next?.map((m) => m.getType())).toEqual(["system", "human", "ai", "human"]);
    expect(next?.[0]).toBe(messages[0]);
    expect(text(next![1])).toContain("summary #1");
    expect(next?.slice(2)).toEqual(messages.slice(5));
    expect(model.prompts[0]).toContain('get_weather [id call_p] {"q":"call_p"}');
    expect(model.prompts[0]).toContain("Tool result for call_r (get_weather): sun");
    expect(model.prompts[0]).not.toContain("sys\n");
  });

  it("triggers on tokens", async () => {
    const options = (tokens: number): SummarizationOptions => ({
      model: new RecordingSummarizer(),
      trigger: { tokens },
      keep: { messages: 2 },
      tokenCounter: (messages) => messages.length * 100,
    });
    // langchain's semantics: the trigger fires when the count reaches the limit (>=).
    expect(await summarizeHistory(conversation(), options(701))).toBeUndefined();
    expect(await summarizeHistory(conversation(), options(700))).toBeDefined();
  });

  it("a token budget keeps at least the last message, as langchain's does", async () => {
    const question = new HumanMessage(`q2 ${"x".repeat(2000)}`);
    const next = await summarizeHistory([new HumanMessage("q1"), new AIMessage("a1"), question], {
      model: new RecordingSummarizer(),
      trigger: { messages: 2 },
      keep: { tokens: 0 },
    });
    expect(next?.at(-1)).toBe(question);
  });

  it("refuses an older name only at the top: inside trigger it is an unknown key, with the keys it takes", async () => {
    const options = { model: new RecordingSummarizer(), trigger: { maxTokens: 5 } } as unknown as SummarizationOptions;
    await expect(summarizeHistory(conversation(), options)).rejects.toThrow(
      /options\.trigger\.maxTokens is not an option; its options are messages, tokens, fraction/,
    );
  });

  it("does not summarize a prefix that is only an earlier summary", async () => {
    const tail = [new HumanMessage("q"), new AIMessage("a")];
    const messages = [...buildSummaryMessages("old", [new AIMessage("x")]), ...tail];
    const next = await summarizeHistory(messages, {
      model: new RecordingSummarizer(),
      trigger: { messages: 1 },
      keep: { messages: 2 },
    });
    expect(next).toBeUndefined();
  });

  it("is valid for every provider, for any history and budget (payload validators included)", async () => {
    const caseArb = historyArb(5).chain((messages) =>
      fc.tuple(
        fc.constant(messages),
        fc.integer({ min: 0, max: messages.length + 1 }),
        fc.integer({ min: 0, max: 1500 }),
        fc.boolean(),
      ),
    );
    await fc.assert(
      fc.asyncProperty(caseArb, async ([messages, keepLast, maxTokens, byTokens]) => {
        const model = new FakeListChatModel({ responses: ["the summary"] });
        const keep = byTokens ? { tokens: maxTokens } : { messages: keepLast };
        const tokenCounter = (m: BaseMessage[]) => m.length * 20;
        const next =
          (await summarizeHistory(messages, { model, trigger: { messages: 1 }, keep, tokenCounter })) ?? messages;
        expect(problemsEverywhere(next)).toEqual([]);
        expect(await validatePayloadFor("strict", next)).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});

describe("one option shape on every summarization surface (langchain's, issue 21)", () => {
  const turns = (n: number): BaseMessage[] =>
    Array.from({ length: n }, (_, i) =>
      i % 2 === 0
        ? new HumanMessage({ content: `q${i}`, id: `m${i}` })
        : new AIMessage({ content: `a${i}`, id: `m${i}` }),
    );
  type Options = Omit<SummarizationOptions, "model">;
  const summarizer = () =>
    Object.defineProperty(new RecordingSummarizer(), "profile", {
      value: { maxInputTokens: 100 },
    }) as RecordingSummarizer;
  type BeforeModel = (state: object, runtime: object) => Promise<{ messages: BaseMessage[] } | undefined>;
  /** Each surface, run once on `messages`: the summarized list (without RemoveMessage), or undefined. */
  const SURFACES: Record<string, (options: SummarizationOptions, messages: BaseMessage[]) => Promise<unknown>> = {
    summarizeHistory: (options, messages) => summarizeHistory(messages, options),
    summarizationNode: async (options, messages) =>
      ((await summarizationNode(options)({ messages })) as { messages?: BaseMessage[] }).messages?.slice(1),
    summarizationHook: async (options, messages) =>
      ((await summarizationHook(options)({ messages })) as { messages?: BaseMessage[] }).messages?.slice(1),
    summarizationMiddleware: async (options, messages) =>
      (
        await (summarizationMiddleware(options).beforeModel as unknown as BeforeModel)({ messages }, {})
      )?.messages.slice(1),
  };
  // Six messages of 10 tokens each: 6 messages, 60 tokens, 0.6 of the summarizer's 100-token input limit.
  const CASES: [SummarizationTrigger, boolean][] = [
    [{ messages: 6 }, true], // >=
    [{ messages: 7 }, false],
    [{ tokens: 60 }, true],
    [{ tokens: 61 }, false],
    [{ fraction: 0.6 }, true],
    [{ fraction: 0.61 }, false],
    [{ messages: 6, tokens: 61 }, false], // one condition: every limit it sets (AND)
    [{ messages: 6, tokens: 60 }, true],
    [[{ messages: 7 }, { tokens: 60 }], true], // a list: any condition (OR)
    [[{ messages: 7 }, { tokens: 61 }], false],
  ];

  it.each(Object.keys(SURFACES))("%s: trigger fires as langchain's does (AND within, OR across, >=)", async (name) => {
    for (const [trigger, fires] of CASES) {
      const options = {
        model: summarizer(),
        trigger,
        keep: { messages: 2 },
        tokenCounter: (m: BaseMessage[]) => m.length * 10,
      };
      const next = await SURFACES[name](options, turns(6));
      expect(next === undefined ? "no summary" : "summary", JSON.stringify(trigger)).toBe(
        fires ? "summary" : "no summary",
      );
    }
  });

  it.each(Object.keys(SURFACES))(
    "%s: summaryPrompt, keep and trimTokensToSummarize mean the same; the old prompt option is refused as no option",
    async (name) => {
      const model = summarizer();
      const options: Options = {
        trigger: { messages: 2 },
        keep: { tokens: 25 },
        tokenCounter: async (m: BaseMessage[]) => m.length * 10,
        summaryPrompt: "Summarize:\n{messages}",
        trimTokensToSummarize: 20,
      };
      const next = (await SURFACES[name]({ ...options, model }, turns(8))) as BaseMessage[];
      // 25 tokens keep 2 messages (the kept part opens on a user turn: an acknowledgement follows the summary).
      expect(next.map(text)).toEqual([`${DEFAULT_SUMMARY_PREFIX}\n\nsummary #1`, DEFAULT_ACKNOWLEDGEMENT, "q6", "a7"]);
      // 20 tokens of the 6 summarized messages reach the summarizer: the newest 2.
      expect(model.prompts).toEqual(["Summarize:\n(4 earlier messages omitted)\nUser: q4\nAssistant: a5"]);
      let error: unknown;
      try {
        await SURFACES[name]({ ...options, model, prompt: () => [] } as never, turns(8));
      } catch (e) {
        error = e;
      }
      expect(ToolCallRepairInputError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain("options.prompt is not an option");
    },
  );
});

describe("summarizationNode in a StateGraph", () => {
  it("persists [RemoveMessage(all), system, summary, ...tail] and leaves state alone under the threshold", async () => {
    const summarizer = new FakeListChatModel({ responses: ["first summary", "second summary"] });
    let turn = 0;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("summarize", summarizationNode({ model: summarizer, trigger: { messages: 9 }, keep: { messages: 3 } }))
      .addNode("agent", async () => ({ messages: [new AIMessage(`answer ${++turn}`)] }))
      .addEdge(START, "summarize")
      .addEdge("summarize", "agent")
      .addEdge("agent", END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t1" } };

    await graph.invoke({ messages: [new SystemMessage("sys"), new HumanMessage("q1")] }, config);
    for (let i = 2; i <= 4; i++) await graph.invoke({ messages: [new HumanMessage(`q${i}`)] }, config);
    const before = (await graph.getState(config)).values.messages as BaseMessage[];
    expect(before).toHaveLength(9);
    expect(before.some(isSummaryMessage)).toBe(false);

    await graph.invoke({ messages: [new HumanMessage("q5")] }, config);
    const after = (await graph.getState(config)).values.messages as BaseMessage[];
    expect(after.map((m) => m.getType())).toEqual(["system", "human", "ai", "human", "ai", "human", "ai"]);
    expect(text(after[1])).toContain("first summary");
    expect(after.slice(3).map(text)).toEqual(["q4", "answer 4", "q5", "answer 5"]);
    expect(problemsEverywhere(after, { endsOnUser: false })).toEqual([]);
  });
});

describe("summarizationNode: a tail with a repeated id", () => {
  it("the update, as LangGraph's reducer applies it, keeps every kept message under an id of its own", async () => {
    // Two different messages with one id (a client that reuses ids): after REMOVE_ALL_MESSAGES the reducer
    // would keep both under that id, and the next update by id would replace the wrong one.
    const history = [
      new SystemMessage({ content: "sys", id: "s" }),
      ...Array.from({ length: 8 }, (_, i) => [
        new HumanMessage({ content: `q${i}`, id: `h${i}` }),
        new AIMessage({ content: `a${i}`, id: `a${i}` }),
      ]).flat(),
      new HumanMessage({ content: "first words", id: "dup" }),
      new AIMessage({ content: "reply", id: "r" }),
      new HumanMessage({ content: "second words", id: "dup" }),
    ];
    const node = summarizationNode({
      model: new RecordingSummarizer(),
      trigger: { messages: 10 },
      keep: { messages: 3 },
    });
    const update = (await node({ messages: history }, {})) as { messages: BaseMessage[] };
    const stored = messagesStateReducer(history, update.messages);
    expect(stored.slice(-3).map(text)).toEqual(["first words", "reply", "second words"]);
    const ids = stored.map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("summarizationHook with createReactAgent", () => {
  it("keeps every model input valid across repeated summarization of a tool loop", async () => {
    const agentModel = new ScriptedToolModel();
    const lookup = tool(async ({ page }) => `page ${page} content`, {
      name: "lookup",
      description: "look a page up",
      schema: z.object({ page: z.number() }),
    });
    const summarizer = new RecordingSummarizer();
    const agent = createReactAgent({
      llm: agentModel,
      tools: [lookup],
      prompt: "You are helpful.",
      preModelHook: summarizationHook({ model: summarizer, trigger: { messages: 10 }, keep: { messages: 4 } }),
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "react" } };
    for (let i = 1; i <= 8; i++) await agent.invoke({ messages: [new HumanMessage(`question ${i}`)] }, config);

    expect(summarizer.prompts.length).toBeGreaterThan(2);
    for (const input of agentModel.inputs) {
      // The agent prepends its prompt as a system message; the rest is what the hook left in state.
      expect(problemsEverywhere(input)).toEqual([]);
    }
    // Never a stale list: each model input holds the newest user question of its turn.
    const state = (await agent.getState(config)).values.messages as BaseMessage[];
    expect(state.length).toBeLessThanOrEqual(11);
    expect(text(state.filter((m) => m.getType() === "human").at(-1)!)).toBe("question 8");
    expect(agentModel.inputs.at(-1)!.some((m) => text(m) === "question 8")).toBe(true);
  });
});

describe("repeated summarization of a long conversation", () => {
  it("keeps a 500-turn conversation valid at every model call, folding each summary into the next", async () => {
    const turns = fc.sample(turnArb, { numRuns: 500, seed: 42 });
    const builder = new HistoryBuilder();
    const stream = [builder.system(), ...turns.flatMap((t) => builder.turn(t)), builder.question()];
    const summarizer = new RecordingSummarizer();
    const node = summarizationNode({ model: summarizer, trigger: { messages: 40 }, keep: { messages: 12 } });

    let state: BaseMessage[] = [];
    let modelCalls = 0;
    for (let i = 0; i < stream.length; i++) {
      state = messagesStateReducer(state, [stream[i]]);
      // The model is called after a user message and after the last result of a run.
      const modelIsNext = i === stream.length - 1 || AIMessage.isInstance(stream[i + 1]);
      if (!modelIsNext) continue;
      const update = await node({ messages: state });
      if ("messages" in update) state = messagesStateReducer(state, update.messages);
      modelCalls++;
      expect(problemsEverywhere(state)).toEqual([]);
      expect(state.length).toBeLessThanOrEqual(41 + 12);
    }
    expect(modelCalls).toBeGreaterThan(500);
    expect(summarizer.prompts.length).toBeGreaterThan(30);
    summarizer.prompts.slice(1).forEach((prompt, k) => expect(prompt).toContain(`summary #${k + 1}`));
    expect(state[0].getType()).toBe("system");
    expect(await validatePayloadFor("strict", state)).toEqual([]);
  });
});
