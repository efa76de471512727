/**
 * summarizationMiddleware for createAgent, through the real ChatBedrockConverse and ChatOpenAI clients against
 * the local stubs (which reject what the providers reject): every request valid, the stored thread structurally
 * valid, and side by side with langchain's own summarizationMiddleware on the same thread.
 */
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, summarizationMiddleware as langchainSummarizationMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { findToolCallProblems } from "../../src/engine";
import { ToolCallRepairInputError } from "../../src/errors";
import { toolCallRepairMiddleware } from "../../src/integrations/middleware";
import { summarizationMiddleware } from "../../src/integrations/summarization-middleware";
import { DEFAULT_ACKNOWLEDGEMENT, DEFAULT_SUMMARY_PREFIX, isSummaryMessage } from "../../src/summarize/summarize";
import { bedrockModel, openAIModel, startBedrockStub, startOpenAIStub, type ScriptedTurn } from "../support/stubs";
import { bedrockShape, openAIShape, rejectionOf, shapeOf, stubTracker } from "./fixtures";

const track = stubTracker();
const thread = (id: string) => ({ configurable: { thread_id: id } });
type Dict = Record<string, unknown>;

const lookup = tool(async ({ page }: { page: number }) => `page ${page} content`, {
  name: "lookup",
  description: "Look a page up",
  schema: z.object({ page: z.number() }),
});

const LOOKUPS: ScriptedTurn = {
  toolCalls: [
    { name: "lookup", args: { page: 1 } },
    { name: "lookup", args: { page: 2 } },
  ],
};
const ANSWER: ScriptedTurn = { text: "Here is what I found." };

/** Bedrock: after tool results an answer, otherwise two parallel lookups. */
const bedrockLoop = (request: unknown): ScriptedTurn => {
  const last = ((request as { messages: { content: Dict[] }[] }).messages.at(-1)?.content ?? []) as Dict[];
  return last.some((block) => block.toolResult) ? ANSWER : LOOKUPS;
};

/** OpenAI Chat Completions: the same loop. */
const openAILoop = (request: unknown): ScriptedTurn =>
  (request as { messages: Dict[] }).messages.at(-1)?.role === "tool" ? ANSWER : LOOKUPS;

const summaries = (_request: unknown, i: number): ScriptedTurn => ({ text: `summary #${i + 1}` });

const storedOf = async (agent: { getState(config: object): Promise<{ values: unknown }> }, config: object) =>
  ((await agent.getState(config)).values as { messages: BaseMessage[] }).messages;

/** Each request's first user text (the summary when one was made). */
const bedrockFirstText = (request: unknown) =>
  String(
    ((request as { messages: { content: Dict[] }[] }).messages[0]?.content ?? []).find(
      (b) => typeof b.text === "string",
    )?.text ?? "",
  );

// Fires at the new question of turn 2 (6 messages, keeping the question: the kept part opens with a user turn),
// then right after turn 2's parallel result run (6 messages again, keeping 1 would split the run).
const TRIGGER = { messages: 6 };
const KEEP = { messages: 1 };

describe("summarizationMiddleware in createAgent", () => {
  it(
    "Bedrock: summarizes at a new question and mid-exchange after parallel results; every request " +
      "valid, the thread stored valid",
    async () => {
      const stub = await track(startBedrockStub({ script: bedrockLoop }));
      const summarizerStub = await track(startBedrockStub({ script: summaries }));
      const agent = createAgent({
        model: bedrockModel(stub),
        tools: [lookup],
        systemPrompt: "You are helpful.",
        middleware: [summarizationMiddleware({ model: bedrockModel(summarizerStub), trigger: TRIGGER, keep: KEEP })],
        checkpointer: new MemorySaver(),
      });
      for (let i = 1; i <= 3; i++) await agent.invoke({ messages: [new HumanMessage(`question ${i}`)] }, thread("t"));

      expect(stub.rejections).toEqual([]);
      expect(summarizerStub.rejections).toEqual([]);
      const summarized = stub.requests.filter((r) => bedrockFirstText(r).startsWith(DEFAULT_SUMMARY_PREFIX));
      // At the new question: summary, acknowledgement, question (roles alternate).
      expect(bedrockShape(summarized[0])).toEqual(["user(text)", "assistant(text)", "user(text)"]);
      // Mid-exchange: keep 1 would have kept the last result alone; the whole exchange is kept.
      expect(bedrockShape(summarized[1])).toEqual([
        "user(text)",
        expect.stringMatching(/^assistant\(toolUse:\w+,toolUse:\w+\)$/),
        expect.stringMatching(/^user\(toolResult:\w+,toolResult:\w+\)$/),
      ]);
      const stored = await storedOf(agent, thread("t"));
      expect(findToolCallProblems(stored, { level: "structural" })).toEqual([]);
      expect(isSummaryMessage(stored[0])).toBe(true);
      expect(String(stored[0].content)).toMatch(/^Summary of the conversation so far:\n\nsummary #\d$/);
    },
  );

  it("OpenAI: the same thread, every request valid, the thread stored valid", async () => {
    const stub = await track(startOpenAIStub({ script: openAILoop }));
    const summarizerStub = await track(startOpenAIStub({ script: summaries }));
    const agent = createAgent({
      model: openAIModel(stub),
      tools: [lookup],
      middleware: [summarizationMiddleware({ model: openAIModel(summarizerStub), trigger: TRIGGER, keep: KEEP })],
      checkpointer: new MemorySaver(),
    });
    for (let i = 1; i <= 3; i++) await agent.invoke({ messages: [new HumanMessage(`question ${i}`)] }, thread("t"));

    expect(stub.rejections).toEqual([]);
    expect(summarizerStub.calls).toBeGreaterThanOrEqual(2);
    expect(openAIShape(stub.requests.at(-1))).toEqual([
      "user",
      expect.stringMatching(/^assistant\[call_\w+,call_\w+\]$/),
      expect.stringMatching(/^tool:/),
      expect.stringMatching(/^tool:/),
    ]);
    const stored = await storedOf(agent, thread("t"));
    expect(findToolCallProblems(stored, { level: "structural" })).toEqual([]);
  });

  it(
    "with toolCallRepairMiddleware: the thread is repaired on input (beforeAgent), then summarized " +
      "(beforeModel) without splitting the repaired exchange",
    async () => {
      const stub = await track(startBedrockStub({ script: [{ text: "4" }] }));
      const summarizerStub = await track(startBedrockStub({ script: summaries }));
      const agent = createAgent({
        model: bedrockModel(stub),
        tools: [lookup],
        middleware: [
          summarizationMiddleware({
            model: bedrockModel(summarizerStub),
            trigger: { messages: 4 },
            keep: { messages: 2 },
          }),
          toolCallRepairMiddleware(),
        ],
        checkpointer: new MemorySaver(),
      });
      // A call left unanswered, then a new question: what a new input after an aborted run leaves in a thread.
      const history = [
        new HumanMessage({ content: "hello", id: "h0" }),
        new AIMessage({ content: "hi", id: "a0" }),
        new HumanMessage({ content: "look page 1 up", id: "h1" }),
        new AIMessage({
          content: "",
          id: "a1",
          tool_calls: [{ id: "tooluse_abandoned1", name: "lookup", args: { page: 1 }, type: "tool_call" }],
        }),
        new HumanMessage({ content: "never mind, what is 2 + 2?", id: "h2" }),
      ];
      await agent.invoke({ messages: history }, thread("t"));

      expect(stub.rejections).toEqual([]);
      // keep 2 lands on the placeholder result: its call is kept with it.
      expect(bedrockShape(stub.requests[0])).toEqual([
        "user(text)",
        "assistant(toolUse:tooluse_abandoned1)",
        "user(toolResult:tooluse_abandoned1)",
        "assistant(text)", // Bedrock shaping between the result and the question, request only
        "user(text)",
      ]);
      const stored = await storedOf(agent, thread("t"));
      expect(shapeOf(stored)).toEqual(["human", "ai[tooluse_abandoned1]", "tool(tooluse_abandoned1)*", "human", "ai"]);
      expect(findToolCallProblems(stored, { level: "structural" })).toEqual([]);
    },
  );

  it("never fails the run: when the summarizer throws, the model gets the history unchanged and onError hears of it", async () => {
    const stub = await track(startBedrockStub({ script: bedrockLoop }));
    const errors: unknown[] = [];
    const failing = new FakeListChatModel({ responses: [] });
    failing.invoke = async () => {
      throw new Error("summarizer down");
    };
    const agent = createAgent({
      model: bedrockModel(stub),
      tools: [lookup],
      middleware: [
        summarizationMiddleware({
          model: failing,
          trigger: { messages: 1 },
          keep: KEEP,
          onError: (e) => errors.push(e),
        }),
      ],
      checkpointer: new MemorySaver(),
    });
    const result = await agent.invoke({ messages: [new HumanMessage("question 1")] }, thread("t"));
    expect(result.messages.at(-1)?.text).toBe("Here is what I found.");
    expect(stub.rejections).toEqual([]);
    // The first model call had nothing to summarize (keep 1 of 1); the second, after the tools, failed.
    expect(errors.map((e) => (e as Error).message)).toEqual(["summarizer down"]);
    expect((await storedOf(agent, thread("t"))).some(isSummaryMessage)).toBe(false);
  });
});

describe("side by side with langchain's summarizationMiddleware (langchain 1.5.14), same thread, same options", () => {
  it("Bedrock: langchain's summary is a user turn straight before the kept question (B6) and the run fails; ours alternates", async () => {
    const stub = await track(startBedrockStub({ script: bedrockLoop }));
    const agent = createAgent({
      model: bedrockModel(stub),
      tools: [lookup],
      middleware: [
        langchainSummarizationMiddleware({
          model: new FakeListChatModel({ responses: ["the summary"] }),
          trigger: TRIGGER,
          keep: KEEP,
        }),
      ],
      checkpointer: new MemorySaver(),
    });
    await agent.invoke({ messages: [new HumanMessage("question 1")] }, thread("t"));
    const error = await rejectionOf(() => agent.invoke({ messages: [new HumanMessage("question 2")] }, thread("t")));
    expect(error.message).toBe(
      "A conversation must alternate between user and assistant roles. Make sure the conversation " +
        "alternates between user and assistant roles and try again.",
    );
    expect(bedrockShape(stub.requests.at(-1))).toEqual(["user(text)", "user(text)"]);
    // The summary was persisted before the call failed: every later turn of this thread fails the same way.
    expect(shapeOf(await storedOf(agent, thread("t")))).toEqual(["human", "human"]);
    await rejectionOf(() => agent.invoke({ messages: [new HumanMessage("question 3")] }, thread("t")));

    const ours = await track(startBedrockStub({ script: bedrockLoop }));
    const fixed = createAgent({
      model: bedrockModel(ours),
      tools: [lookup],
      middleware: [
        summarizationMiddleware({
          model: new FakeListChatModel({ responses: ["the summary"] }),
          trigger: TRIGGER,
          keep: KEEP,
        }),
      ],
      checkpointer: new MemorySaver(),
    });
    for (let i = 1; i <= 3; i++) await fixed.invoke({ messages: [new HumanMessage(`question ${i}`)] }, thread("t"));
    expect(ours.rejections).toEqual([]);
  });

  it("OpenAI (no alternation rule): langchain's cut of a plain parallel exchange mid-run is valid on this version (pinned)", async () => {
    const stub = await track(startOpenAIStub({ script: openAILoop }));
    // 5, not 6: langchain writes no acknowledgement turn, so its thread is one message shorter than ours.
    const agent = createAgent({
      model: openAIModel(stub),
      tools: [lookup],
      middleware: [
        langchainSummarizationMiddleware({
          model: new FakeListChatModel({ responses: ["the summary"] }),
          trigger: { messages: 5 },
          keep: KEEP,
        }),
      ],
      checkpointer: new MemorySaver(),
    });
    for (let i = 1; i <= 3; i++) await agent.invoke({ messages: [new HumanMessage(`question ${i}`)] }, thread("t"));
    expect(stub.rejections).toEqual([]);
    // Mid-exchange (after turn 2's results) keep 1 lands on the last result; its cutoff (findSafeCutoffPoint)
    // moves back to the calls: no split here. It breaks on mixed result runs and on calls stored only as content
    // blocks (langchain-comparison.test.ts), and on Bedrock's alternation (above).
    const shapes = stub.requests.map(openAIShape);
    expect(shapes).toContainEqual([
      "user",
      expect.stringMatching(/^assistant\[call_\w+,call_\w+\]$/),
      expect.stringMatching(/^tool:/),
      expect.stringMatching(/^tool:/),
    ]);
    expect(shapes).toContainEqual(["user", "user"]); // summary, then the kept question: fine on OpenAI
    expect(findToolCallProblems(await storedOf(agent, thread("t")), { level: "structural" })).toEqual([]);
  });
});

describe("summarizationMiddleware options (langchain's, where they make sense)", () => {
  type Hook = (state: { messages: BaseMessage[] }, runtime: Dict) => Promise<{ messages: BaseMessage[] } | undefined>;
  const hookOf = (middleware: ReturnType<typeof summarizationMiddleware>) => middleware.beforeModel as unknown as Hook;
  const turns = (n: number): BaseMessage[] =>
    Array.from({ length: n }, (_, i) =>
      i % 2 === 0
        ? new HumanMessage({ content: `q${i}`, id: `m${i}` })
        : new AIMessage({ content: `a${i}`, id: `m${i}` }),
    );
  const run = async (options: Parameters<typeof summarizationMiddleware>[0], messages: BaseMessage[]) => {
    const update = await hookOf(summarizationMiddleware(options))({ messages }, {});
    return update?.messages.slice(1);
  };
  const model = () => new FakeListChatModel({ responses: ["S"] });

  it("trigger: one condition needs all its limits (>=), a list needs any condition", async () => {
    const counter = (m: BaseMessage[]) => m.length * 10;
    expect(
      await run(
        { model: model(), trigger: { messages: 6, tokens: 70 }, keep: { messages: 2 }, tokenCounter: counter },
        turns(6),
      ),
    ).toBeUndefined();
    // Summary, acknowledgement (the kept part opens with a user turn), q4, a5.
    expect(
      await run(
        { model: model(), trigger: { messages: 6, tokens: 60 }, keep: { messages: 2 }, tokenCounter: counter },
        turns(6),
      ),
    ).toHaveLength(4);
    expect(
      await run(
        { model: model(), trigger: [{ messages: 9 }, { tokens: 60 }], keep: { messages: 2 }, tokenCounter: counter },
        turns(6),
      ),
    ).toHaveLength(4);
  });

  it("keep tokens with an async counter; the last message is always kept", async () => {
    const counter = async (m: BaseMessage[]) => m.length * 10;
    const kept = await run(
      { model: model(), trigger: { messages: 2 }, keep: { tokens: 30 }, tokenCounter: counter },
      turns(8),
    );
    // 3 messages fit; the kept part opens on an assistant message, so no acknowledgement is needed.
    expect(kept!.map((m) => m.content)).toEqual([`${DEFAULT_SUMMARY_PREFIX}\n\nS`, "a5", "q6", "a7"]);
    const tiny = await run(
      { model: model(), trigger: { messages: 2 }, keep: { tokens: 1 }, tokenCounter: counter },
      turns(8),
    );
    expect(tiny!.map((m) => m.content).slice(1)).toEqual(["a7"]);
  });

  it("keep fraction uses the summarizer's profile (maxInputTokens) and is refused without it", async () => {
    const withProfile = Object.defineProperty(model(), "profile", { value: { maxInputTokens: 100 } });
    const kept = await run(
      { model: withProfile, trigger: { messages: 2 }, keep: { fraction: 0.3 }, tokenCounter: (m) => m.length * 10 },
      turns(8),
    );
    expect(kept!.slice(1).map((m) => m.content)).toEqual(["a5", "q6", "a7"]);
    expect(() => summarizationMiddleware({ model: model(), trigger: { fraction: 0.5 } })).toThrow(
      /model.profile.maxInputTokens/,
    );
  });

  it("summaryPrompt: {messages} is replaced by the transcript as is (no $& expansion); the prompt is one user message", async () => {
    const prompts: BaseMessage[][] = [];
    const recording = { invoke: async (input: BaseMessage[]) => (prompts.push(input), new AIMessage("S")) };
    const messages = [
      new HumanMessage({ content: "price is $& and $1", id: "h" }),
      new AIMessage({ content: "ok", id: "a" }),
      new HumanMessage({ content: "next", id: "n" }),
    ];
    await run(
      {
        model: recording,
        trigger: { messages: 3 },
        keep: { messages: 1 },
        summaryPrompt: "Summarize:\n{messages}\nEnd.",
      },
      messages,
    );
    expect(prompts[0].map((m) => m.getType())).toEqual(["human"]);
    expect(prompts[0][0].content).toBe("Summarize:\nUser: price is $& and $1\nAssistant: ok\nEnd.");
  });

  it("summaryPrefix and acknowledgement; leading system messages are kept", async () => {
    const kept = await run(
      {
        model: model(),
        trigger: { messages: 3 },
        keep: { messages: 1 },
        summaryPrefix: "Earlier:",
        acknowledgement: "Noted.",
      },
      [new SystemMessage({ content: "sys", id: "s" }), ...turns(5)],
    );
    expect(kept!.map((m) => [m.getType(), m.content])).toEqual([
      ["system", "sys"],
      ["human", "Earlier:\n\nS"],
      ["ai", "Noted."],
      ["human", "q4"],
    ]);
    expect(DEFAULT_ACKNOWLEDGEMENT).not.toBe("Noted.");
  });

  it(
    "trimTokensToSummarize: the summarizer sees the earlier summary and the newest messages that " +
      "fit, never a result without its call",
    async () => {
      const prompts: string[] = [];
      const recording = {
        invoke: async (input: BaseMessage[]) => (prompts.push(String(input.at(-1)!.content)), new AIMessage("S2")),
      };
      const call = (id: string) => ({ id, name: "lookup", args: { page: 1 }, type: "tool_call" as const });
      const messages = [
        new HumanMessage({
          content: "Summary of the conversation so far:\n\nS1",
          id: "s1",
          additional_kwargs: { lc_source: "summarization" },
        }),
        ...turns(6),
        new AIMessage({ content: "", id: "c", tool_calls: [call("x"), call("y")] }),
        new ToolMessage({ content: "rx", tool_call_id: "x", id: "tx" }),
        new ToolMessage({ content: "ry", tool_call_id: "y", id: "ty" }),
        new HumanMessage({ content: "last", id: "l" }),
      ];
      await run(
        {
          model: recording,
          trigger: { messages: 5 },
          keep: { messages: 1 },
          trimTokensToSummarize: 25,
          tokenCounter: (m) => m.length * 10,
        },
        messages,
      );
      // 25 tokens: the earlier summary and one more message; that message is the last result, so its call and
      // the other result come too.
      expect(prompts[0]).toMatch(
        /User: Summary of the conversation so far:\n\nS1\n\(6 earlier messages omitted\)\nAssistant called 2 tools in parallel:/,
      );
      expect(prompts[0]).toContain("Tool result for x (lookup): rx\nTool result for y (lookup): ry");
    },
  );

  it('model as a "provider:model" string is built with langchain\'s initChatModel', async () => {
    const summarizerStub = await track(startOpenAIStub({ script: summaries }));
    const saved = { key: process.env.OPENAI_API_KEY, url: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = "x";
    process.env.OPENAI_BASE_URL = `${summarizerStub.url}/v1`;
    try {
      const hook = hookOf(
        summarizationMiddleware({ model: "openai:gpt-4.1-mini", trigger: { messages: 3 }, keep: { messages: 1 } }),
      );
      const first = await hook({ messages: turns(4) }, {});
      const second = await hook({ messages: turns(5) }, {});
      expect(first!.messages.slice(1).map((m) => m.content)).toEqual([`${DEFAULT_SUMMARY_PREFIX}\n\nsummary #1`, "a3"]);
      expect(String(second!.messages[1].content)).toContain("summary #2");
      expect(summarizerStub.rejections).toEqual([]);
    } finally {
      for (const [name, value] of [
        ["OPENAI_API_KEY", saved.key],
        ["OPENAI_BASE_URL", saved.url],
      ] as const)
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
    }
  });

  it("a state it cannot read: no update, the error reported", async () => {
    const errors: unknown[] = [];
    const hook = hookOf(
      summarizationMiddleware({ model: model(), trigger: { messages: 1 }, onError: (e) => errors.push(e) }),
    );
    expect(await hook({ messages: [new HumanMessage("q"), null as never] }, {})).toBeUndefined();
    expect((errors[0] as ToolCallRepairInputError).message).toBe(
      "langgraph-tool-repair: messages[1] is null, not a message",
    );
  });

  it("bad options are refused with a ToolCallRepairInputError naming them", () => {
    const bad = (options: unknown, argument: string) => {
      let error: unknown;
      try {
        summarizationMiddleware(options as never);
      } catch (e) {
        error = e;
      }
      expect(ToolCallRepairInputError.isInstance(error), String(error)).toBe(true);
      expect((error as ToolCallRepairInputError).argument).toBe(argument);
    };
    bad(null, "options.model");
    bad({ trigger: { messages: 3 } }, "options.model");
    bad({ model: model() }, "options.trigger");
    bad({ model: model(), trigger: [] }, "options.trigger");
    bad({ model: model(), trigger: [{ messages: 3 }, { tokens: 0 }] }, "options.trigger[1].tokens");
    bad({ model: model(), trigger: { messages: 2.5 } }, "options.trigger.messages");
    bad({ model: model(), trigger: {} }, "options.trigger");
    bad({ model: model(), trigger: { messages: 3 }, keep: { messages: 2, tokens: 5 } }, "options.keep");
    bad({ model: model(), trigger: { messages: 3 }, keep: { fraction: 2 } }, "options.keep.fraction");
    bad({ model: model(), trigger: { messages: 3 }, summaryPrompt: "no placeholder" }, "options.summaryPrompt");
    bad({ model: model(), trigger: { messages: 3 }, tokenCounter: 4 }, "options.tokenCounter");
    bad({ model: model(), maxTokensBeforeSummary: 100 }, "options.maxTokensBeforeSummary");
    bad({ model: model(), trigger: { messages: 3 }, prompt: () => [] }, "options.prompt");
  });
});

describe("summarizationMiddleware: a summary that cannot help is not made (issue 34)", () => {
  it("sends an oversized tool result shortened, stores it whole, and calls no summarizer", async () => {
    const stub = await startBedrockStub({
      script: [{ toolCalls: [{ name: "list_apps", args: {} }] }, { text: "800 apps" }],
    });
    try {
      const summarizer = { prompts: 0, invoke: async () => ({ content: `summary ${++summarizer.prompts}` }) };
      const listApps = tool(async () => "a".repeat(60_000), {
        name: "list_apps",
        description: "Lists the apps",
        schema: z.object({}),
      });
      const agent = createAgent({
        model: bedrockModel(stub),
        tools: [listApps],
        middleware: [
          summarizationMiddleware({ model: summarizer, trigger: { tokens: 4000 }, keep: { messages: 4 } }),
          toolCallRepairMiddleware(),
        ],
        checkpointer: new MemorySaver(),
      });
      const config = { configurable: { thread_id: "apps" } };
      const result = await agent.invoke({ messages: [new HumanMessage("List the apps")] }, config);
      expect(result.messages.at(-1)?.text).toBe("800 apps");
      expect(stub.rejections).toEqual([]);
      const sent = JSON.stringify((stub.requests[1] as { messages: unknown[] }).messages);
      expect(sent).toContain("[Shortened in this request: the first");
      expect(sent.length).toBeLessThan(10_000);
      const stored = result.messages.find((m) => ToolMessage.isInstance(m))!;
      expect(stored.content).toBe("a".repeat(60_000));
      expect(summarizer.prompts).toBe(0);
    } finally {
      await stub.close();
    }
  });
});
