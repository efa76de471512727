/**
 * Hostile input to the summarization and trimming functions (issue 9): bad arguments get a
 * ToolCallRepairInputError naming them, never a raw TypeError from deep inside; cyclic content and arguments
 * are rendered and counted; nothing hangs, nothing mutates its input.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ToolCallRepairInputError } from "../../src/errors";
import { summarizationNode } from "../../src/integrations/summarization";
import { approximateTokenCounter, findSafeSummarizationBoundary } from "../../src/summarize/boundary";
import { messagesToTranscript, summarizeHistory } from "../../src/summarize/summarize";
import { trimMessagesSafely } from "../../src/summarize/trim";

const call = (id: string, args: unknown = { q: id }) => ({
  id,
  name: "search",
  args: args as Record<string, unknown>,
  type: "tool_call" as const,
});
const ai = (...ids: string[]) => new AIMessage({ content: "", tool_calls: ids.map((id) => call(id)) });
const result = (id: string) => new ToolMessage({ content: `result ${id}`, tool_call_id: id, name: "search" });
const history = (): BaseMessage[] => [
  new SystemMessage("sys"),
  new HumanMessage("q"),
  ai("a", "b"),
  result("a"),
  result("b"),
  new AIMessage("done"),
  new HumanMessage("q2"),
];
const tenEach = (messages: BaseMessage[]) => messages.length * 10;

/** The error `run` threw (sync or async); fails when it throws nothing. */
async function thrown(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

async function inputError(run: () => unknown): Promise<ToolCallRepairInputError> {
  const error = await thrown(run);
  expect(ToolCallRepairInputError.isInstance(error), String(error)).toBe(true);
  return error as ToolCallRepairInputError;
}

function cyclic(): Record<string, unknown> {
  const value: Record<string, unknown> = { city: "Paris" };
  value.self = value;
  return value;
}

/** An object whose JSON doubles with each level (every level holds the next one twice): 2^depth leaves. */
function sharedTree(depth: number): unknown {
  let node: unknown = { leaf: "x" };
  for (let i = 0; i < depth; i++) node = { left: node, right: node };
  return node;
}

function throwingGetter<T extends object>(message: T, key: string): T {
  Object.defineProperty(message, key, {
    get() {
      throw new Error(`boom reading ${key}`);
    },
  });
  return message;
}

function revoked(): unknown {
  const { proxy, revoke } = Proxy.revocable(new HumanMessage("x"), {});
  revoke();
  return proxy;
}

describe("bad arguments get a ToolCallRepairInputError naming them", () => {
  it("findSafeSummarizationBoundary", async () => {
    expect((await inputError(() => findSafeSummarizationBoundary(null as never, { keepLast: 1 }))).argument).toBe(
      "messages",
    );
    expect((await inputError(() => findSafeSummarizationBoundary([], null as never))).argument).toBe("options");
    expect((await inputError(() => findSafeSummarizationBoundary([], { keepLast: -1 }))).argument).toBe(
      "options.keepLast",
    );
    expect((await inputError(() => findSafeSummarizationBoundary([], { keepLast: Number.NaN }))).argument).toBe(
      "options.keepLast",
    );
    expect((await inputError(() => findSafeSummarizationBoundary([], { maxTokens: 10 } as never))).argument).toBe(
      "options",
    );
    expect(
      (
        await inputError(() =>
          findSafeSummarizationBoundary([], { keepLast: 1, maxTokens: 1, tokenCounter: tenEach } as never),
        )
      ).argument,
    ).toBe("options");
    expect(
      (await inputError(() => findSafeSummarizationBoundary([], { maxTokens: 1, tokenCounter: 5 as never }))).argument,
    ).toBe("options.tokenCounter");
  });

  it("a token counter that returns something other than a count is named; what it throws is its own", async () => {
    const nan = await inputError(() =>
      findSafeSummarizationBoundary(history(), { maxTokens: 10, tokenCounter: () => Number.NaN }),
    );
    expect(nan.argument).toBe("options.tokenCounter");
    const promise = await inputError(() =>
      findSafeSummarizationBoundary(history(), { maxTokens: 10, tokenCounter: (async () => 1) as never }),
    );
    expect(promise.argument).toBe("options.tokenCounter");
    expect(promise.message).toContain("returned a Promise (this function needs a synchronous counter)");
    const own = new RangeError("the counter's own error");
    expect(
      await thrown(() =>
        findSafeSummarizationBoundary(history(), {
          maxTokens: 10,
          tokenCounter: () => {
            throw own;
          },
        }),
      ),
    ).toBe(own);
  });

  it("messagesToTranscript: null, [null], a hole, a number", async () => {
    expect((await inputError(() => messagesToTranscript(null as never))).argument).toBe("messages");
    const atNull = await inputError(() => messagesToTranscript([null as never]));
    expect([atNull.argument, atNull.index, atNull.message]).toEqual([
      "messages",
      0,
      "langgraph-tool-repair: messages[0] is null, not a message",
    ]);
    // eslint-disable-next-line no-sparse-arrays
    expect(
      (await inputError(() => messagesToTranscript([new HumanMessage("a"), , new HumanMessage("b")] as never))).message,
    ).toMatch(/messages\[1\] is undefined, not a message/);
    expect((await inputError(() => messagesToTranscript([new HumanMessage("a"), 42 as never]))).index).toBe(1);
  });

  it("a message whose getters throw, or a revoked proxy, is an input error naming the function, with the cause", async () => {
    const bad = throwingGetter(ai("a"), "tool_calls");
    const error = await inputError(() =>
      findSafeSummarizationBoundary([new HumanMessage("q"), bad, result("a")], { keepLast: 1 }),
    );
    expect(error.message).toBe(
      "langgraph-tool-repair: findSafeSummarizationBoundary: arguments could not be read (boom reading tool_calls)",
    );
    expect(error.cause).toBeInstanceOf(Error);
    expect((await inputError(() => messagesToTranscript([new HumanMessage("q"), revoked() as never]))).message).toMatch(
      /messagesToTranscript: arguments could not be read/,
    );
    expect(
      (await inputError(() => approximateTokenCounter([throwingGetter(new HumanMessage("q"), "content")]))).message,
    ).toMatch(/approximateTokenCounter: arguments could not be read/);
  });

  it("trimMessagesSafely", async () => {
    const options = { maxTokens: 30, tokenCounter: tenEach };
    expect((await inputError(() => trimMessagesSafely(null as never, options))).argument).toBe("messages");
    expect((await inputError(() => trimMessagesSafely(history(), null as never))).argument).toBe("options.maxTokens");
    expect((await inputError(() => trimMessagesSafely(history(), { tokenCounter: tenEach } as never))).argument).toBe(
      "options.maxTokens",
    );
    expect(
      (await inputError(() => trimMessagesSafely(history(), { maxTokens: 1, tokenCounter: "x" } as never))).argument,
    ).toBe("options.tokenCounter");
    expect(
      (await inputError(() => trimMessagesSafely(history(), { ...options, strategy: "middle" } as never))).argument,
    ).toBe("options.strategy");
    // core's own refusal, through the boundary.
    expect(
      (await inputError(() => trimMessagesSafely(history(), { ...options, strategy: "first", startOn: "human" })))
        .message,
    ).toMatch(/`startOn` should only be specified if `strategy` is 'last'/);
    expect(
      (await inputError(() => trimMessagesSafely(history(), { ...options, endOn: "bogus" as never }))).argument,
    ).toBe("options.endOn");
    expect(
      (await inputError(() => trimMessagesSafely(history(), { ...options, endOn: class NotAMessage {} as never })))
        .argument,
    ).toBe("options.endOn");
    expect(
      (await inputError(() => trimMessagesSafely(history(), { ...options, tokenCounter: () => "ten" } as never)))
        .argument,
    ).toBe("options.tokenCounter");
  });

  it("summarizeHistory and the node: model, trigger and keep are checked up front", async () => {
    const model = new FakeListChatModel({ responses: ["s"] });
    const valid = { model, trigger: { messages: 1 }, keep: { messages: 1 } };
    expect(
      (await inputError(() => summarizeHistory(history(), { ...valid, model: undefined as never }))).argument,
    ).toBe("options.model");
    expect((await inputError(() => summarizeHistory(history(), { ...valid, trigger: {} }))).argument).toBe(
      "options.trigger",
    );
    expect((await inputError(() => summarizeHistory(history(), { ...valid, trigger: { tokens: -5 } }))).argument).toBe(
      "options.trigger.tokens",
    );
    // langchain's ContextSize: every limit > 0, messages a whole number; a list of them.
    for (const [trigger, argument] of [
      [{ messages: 0 }, "options.trigger.messages"],
      [{ messages: 2.5 }, "options.trigger.messages"],
      [{ fraction: 1.5 }, "options.trigger.fraction"],
      [[{ messages: 3 }, { tokens: 0 }], "options.trigger[1].tokens"],
      [[], "options.trigger"],
    ] as const)
      expect(
        (await inputError(() => summarizeHistory(history(), { ...valid, trigger: trigger as never }))).argument,
      ).toBe(argument);
    expect((await inputError(() => summarizeHistory(history(), { ...valid, keep: null as never }))).argument).toBe(
      "options.keep",
    );
    // No options: the first required option is missing (as trimMessagesSafely names options.maxTokens).
    expect((await inputError(() => summarizeHistory(history(), null as never))).argument).toBe("options.model");
    expect((await inputError(() => summarizationNode({ ...valid, keep: { messages: "2" as never } }))).argument).toBe(
      "options.keep.messages",
    );
    // An old name is no option (one shape on every summarization surface, langchain's).
    expect((await inputError(() => summarizationNode({ ...valid, keep: { keepLast: 2 } as never }))).argument).toBe(
      "options.keep.keepLast",
    );
  });
});

describe("cyclic content and arguments", () => {
  it("are rendered in the transcript and counted", () => {
    const messages = [
      new HumanMessage({ content: [{ type: "text", text: "look", extra: cyclic() }] }),
      new AIMessage({ content: "", tool_calls: [call("a", cyclic())] }),
      result("a"),
    ];
    expect(messagesToTranscript(messages)).toContain('search [id a] {"city":"Paris","self":"[Circular]"}');
    expect(approximateTokenCounter(messages)).toBeGreaterThan(0);
    // The budget keeps the result only; its call is kept with it.
    expect(findSafeSummarizationBoundary(messages, { maxTokens: 10, tokenCounter: approximateTokenCounter })).toBe(1);
  });

  it("a structure that shares one object at every level is counted without serializing it in full", () => {
    const message = new HumanMessage({ content: [{ type: "data", value: sharedTree(60) }] });
    // 2^60 leaves in JSON: the count stops at its cap (about 2,000,000 tokens) instead of running forever.
    expect(approximateTokenCounter([message])).toBe(2_000_000);
  });
});

/** Freezes a message and everything reachable from it: any write would throw in this (strict) module. */
function deepFreeze<T>(value: T, seen = new Set<unknown>()): T {
  if (typeof value !== "object" || value === null || seen.has(value)) return value;
  seen.add(value);
  for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key], seen);
  return Object.freeze(value);
}

describe("the caller's messages are not changed", () => {
  it("every function runs on deeply frozen messages and leaves them as they were", async () => {
    const messages = [
      new SystemMessage({ content: "sys", id: "s" }),
      new HumanMessage({ content: "q", id: "h" }),
      new AIMessage({ content: [{ type: "text", text: "calling" }], id: "a", tool_calls: [call("a"), call("b")] }),
      new ToolMessage({ content: "line one\nline two", tool_call_id: "a", id: "ta" }),
      new ToolMessage({ content: [{ type: "text", text: "rb" }], tool_call_id: "b", id: "tb" }),
      new AIMessage({ content: "done", id: "d" }),
      new HumanMessage({ content: "next question\nwith two lines", id: "n" }),
    ].map((m) => deepFreeze(m));
    const before = JSON.stringify(messages);
    const counter = (list: BaseMessage[]) => list.reduce((n, m) => n + JSON.stringify(m.content).length, 0);
    findSafeSummarizationBoundary(messages, { keepLast: 3 });
    findSafeSummarizationBoundary(messages, { maxTokens: 50, tokenCounter: approximateTokenCounter });
    approximateTokenCounter(messages);
    messagesToTranscript(messages);
    for (const maxTokens of [10, 40, 80])
      for (const strategy of ["first", "last"] as const)
        await trimMessagesSafely(messages, { maxTokens, tokenCounter: counter, strategy, allowPartial: true });
    await summarizeHistory(messages, {
      model: new FakeListChatModel({ responses: ["s"] }),
      trigger: { messages: 1 },
      keep: { messages: 2 },
    });
    expect(JSON.stringify(messages)).toBe(before);
  });

  it(
    "trimMessagesSafely with strategy first and allowPartial leaves the message it shortens alone " +
      "(core shortens it in place)",
    async () => {
      const long = new HumanMessage("line one\nline two\nline three\nline four");
      const messages = [new HumanMessage("q"), new AIMessage("a"), long];
      const counter = (list: BaseMessage[]) => list.reduce((n, m) => n + String(m.content).length, 0);
      const trimmed = await trimMessagesSafely(messages, {
        maxTokens: 20,
        tokenCounter: counter,
        strategy: "first",
        allowPartial: true,
      });
      expect(trimmed.map((m) => m.content)).toEqual(["q", "a", "line one\nline two\n"]);
      expect(long.content).toBe("line one\nline two\nline three\nline four");
    },
  );
});

describe("summarizationNode never fails the run", () => {
  it("returns no update and reports the error when the summarizer throws", async () => {
    const errors: unknown[] = [];
    const failing = {
      invoke: async () => {
        throw new Error("summarizer down");
      },
    };
    const node = summarizationNode({
      model: failing,
      trigger: { messages: 1 },
      keep: { messages: 1 },
      onError: (e) => errors.push(e),
    });
    expect(await node({ messages: history() })).toEqual({});
    expect(errors.map((e) => (e as Error).message)).toEqual(["summarizer down"]);
  });

  it("returns no update when the state holds something that is not a message", async () => {
    const errors: unknown[] = [];
    const node = summarizationNode({
      model: new FakeListChatModel({ responses: ["s"] }),
      trigger: { messages: 1 },
      keep: { messages: 1 },
      onError: (e) => errors.push(e),
    });
    expect(await node({ messages: [new HumanMessage("q"), null as never, new HumanMessage("r")] })).toEqual({});
    expect(ToolCallRepairInputError.isInstance(errors[0])).toBe(true);
  });
});

/** Values that do not belong in a message list, or messages that are hard to read. */
const hostileEntry: fc.Arbitrary<() => unknown> = fc.constantFrom(
  () => null,
  () => undefined,
  () => 42,
  () => Number.NaN,
  () => 10n,
  () => Symbol("s"),
  () => "a plain string",
  () => "x".repeat(200_000),
  () => ({}),
  () => cyclic(),
  () => ({ role: "user", content: cyclic() }),
  () => ({ role: "tool", content: "r", tool_call_id: 7 }),
  () => ({ __proto__: { role: "user" }, content: "x" }),
  () => ({ role: "constructor", content: "x" }),
  () => Object.freeze(new HumanMessage("frozen")),
  () => Object.freeze(ai("a")),
  () => Object.freeze(result("a")),
  () => new HumanMessage({ content: [{ type: "text", text: "t", loop: cyclic() }] }),
  () => new AIMessage({ content: "", tool_calls: [call("a", cyclic())] }),
  () => new AIMessage({ content: [{ type: "tool_use", id: "a", name: "search", input: cyclic() }] }),
  () => new HumanMessage({ content: [{ type: "data", value: sharedTree(40) }] }),
  () => throwingGetter(new HumanMessage("x"), "content"),
  () => throwingGetter(ai("a"), "tool_calls"),
  () => throwingGetter(result("a"), "tool_call_id"),
  () => throwingGetter(new AIMessage("x"), "additional_kwargs"),
  () => revoked(),
  () => new SystemMessage("sys"),
  () => new HumanMessage("q"),
  () => ai("a", "b"),
  () => result("a"),
  () => result("b"),
);

/** A message list: an array of entries, sometimes with a hole, or not an array at all. */
const hostileList: fc.Arbitrary<() => unknown> = fc.oneof(
  fc.array(hostileEntry, { maxLength: 8 }).map((entries) => () => entries.map((make) => make())),
  fc.tuple(fc.array(hostileEntry, { maxLength: 4 }), fc.nat(3)).map(([entries, at]) => () => {
    const list: unknown[] = entries.map((make) => make());
    list.length = Math.max(list.length, at + 1);
    delete list[at];
    return list;
  }),
  hostileEntry,
);

const hostileOptions: fc.Arbitrary<() => unknown> = fc.oneof(
  fc.constantFrom(
    () => ({ keepLast: 2 }),
    () => ({ maxTokens: 50, tokenCounter: approximateTokenCounter }),
    () => ({ maxTokens: 50, tokenCounter: tenEach }),
    () => ({ maxTokens: 50, tokenCounter: () => Number.NaN }),
    () => ({ keepLast: Infinity }),
    () => ({ keepLast: "3" }),
    () => cyclic(),
    () => throwingGetter({ keepLast: 1 }, "keepLast"),
  ),
  hostileEntry,
);

const trimOptions: fc.Arbitrary<() => unknown> = fc.oneof(
  fc.constantFrom(
    () => ({ maxTokens: 40, tokenCounter: tenEach }),
    () => ({ maxTokens: 40, tokenCounter: approximateTokenCounter, strategy: "first", allowPartial: true }),
    () => ({ maxTokens: 40, tokenCounter: tenEach, includeSystem: true, startOn: "human", endOn: ["human", "tool"] }),
    () => ({ maxTokens: 40, tokenCounter: tenEach, startOn: HumanMessage }),
    () => ({ maxTokens: -1, tokenCounter: tenEach }),
    () => ({ maxTokens: 40, tokenCounter: tenEach, textSplitter: 5 }),
  ),
  hostileEntry,
);

/** Runs `work`; anything thrown must be our input error with a message that names what is wrong. */
async function onlyInputErrors(work: () => unknown): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!ToolCallRepairInputError.isInstance(error)) throw new Error(`unexpected ${String(error)}`, { cause: error });
    expect(error.message).toMatch(
      /^langgraph-tool-repair: .*(messages|options|cut|summaryText|counter|trigger|arguments could not be read)/,
    );
  }
}

describe("hostile values never throw anything but ToolCallRepairInputError, never hang", () => {
  it("findSafeSummarizationBoundary, approximateTokenCounter, messagesToTranscript", async () => {
    await fc.assert(
      fc.asyncProperty(hostileList, hostileOptions, async (list, options) => {
        await onlyInputErrors(() => findSafeSummarizationBoundary(list() as never, options() as never));
        await onlyInputErrors(() => approximateTokenCounter(list() as never));
        await onlyInputErrors(() => messagesToTranscript(list() as never));
      }),
      { numRuns: 300 },
    );
  });

  it("trimMessagesSafely and summarizeHistory", async () => {
    await fc.assert(
      fc.asyncProperty(hostileList, trimOptions, hostileOptions, async (list, trim, keep) => {
        await onlyInputErrors(() => trimMessagesSafely(list() as never, trim() as never));
        const model = new FakeListChatModel({ responses: ["the summary"] });
        await onlyInputErrors(() =>
          summarizeHistory(list() as never, { model, trigger: { messages: 1 }, keep: keep() as never }),
        );
      }),
      { numRuns: 150 },
    );
  });
});
