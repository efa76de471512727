/**
 * A safety net that never fails: options checked against their own tables, hostile input answered with a clear
 * error or a reported repair (never a raw error from deep inside, never a mutation of the input), no stale
 * verdict after a message changes in place, and LangChain's stored format read without losing anything.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  AIMessage,
  HumanMessage,
  ToolMessage,
  mapChatMessagesToStoredMessages,
  type BaseMessage,
} from "@langchain/core/messages";
import { createRepairer, findToolCallProblems, isCleanHistory, repairToolCalls } from "../../src/engine";
import { ToolCallRepairInputError } from "../../src/errors";
import { forceRepairToolCalls } from "../../src/recovery/force-repair";
import { parseToolPairingError } from "../../src/recovery/parse-error";
import { toolCallIdsOf } from "../../src/messages/inspect";
import { resumableExchange, trailingOpenExchange } from "../../src/messages/exchanges";
import { ai, aiWithCalls, human, shape, toolResult } from "../support/builders";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

const errorOf = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe("options are checked against their own tables", () => {
  it.each([
    [
      { provider: "__proto__" },
      /options\.provider is "__proto__"; expected one of openai, openai-responses, anthropic, bedrock, gemini, strict/,
    ],
    [{ provider: "toString" }, /options\.provider/],
    [{ trailing: "bogus" }, /options\.trailing is "bogus"; expected one of keep, answer, remove/],
    [{ orphanCalls: "drop" }, /options\.orphanCalls is "drop"; expected one of answer, remove/],
    [{ level: "full" }, /options\.level/],
    [{ onRepair: 3 }, /options\.onRepair is 3; expected a function/],
    [{ syntheticResultText: "x" }, /options\.syntheticResultText/],
  ])("%j is refused with an error naming the option and the accepted values", (options, message) => {
    for (const call of [
      () => repairToolCalls([human()], options as never),
      () => findToolCallProblems([human()], options as never),
      () => isCleanHistory([human()], options as never),
      () => createRepairer(options as never),
    ]) {
      expect(call).toThrow(ToolCallRepairInputError);
      expect(call).toThrow(message);
    }
  });

  it("options that are not an object are refused (isCleanHistory(messages, 'openai') used to return undefined)", () => {
    expect(() => isCleanHistory([human()], "openai" as never)).toThrow(/options is "openai"; expected an object/);
    expect(isCleanHistory([human()])).toBe(true);
    expect(isCleanHistory([human(), aiWithCalls("a")])).toBe(false);
    expect(isCleanHistory([human(), aiWithCalls("a")], { trailing: "keep" })).toBe(true);
  });

  it("options are read behind the boundary: a throwing getter or a revoked proxy is an input error with its cause", () => {
    const throwing = {
      get provider(): string {
        throw new Error("x");
      },
    };
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    for (const call of [
      (o: unknown) => repairToolCalls([human()], o as never),
      (o: unknown) => findToolCallProblems([human()], o as never),
      (o: unknown) => isCleanHistory([human()], o as never),
      (o: unknown) => createRepairer(o as never),
    ]) {
      expect(errorOf(() => call(throwing))).toMatchObject({
        name: "ToolCallRepairInputError",
        message: expect.stringContaining("could not be read (x)"),
        cause: expect.objectContaining({ message: "x" }),
      });
      expect(errorOf(() => call(proxy))).toMatchObject({ name: "ToolCallRepairInputError" });
    }
    const throwingFind = {
      get trailingIsProblem(): boolean {
        throw new Error("y");
      },
    };
    expect(errorOf(() => findToolCallProblems([human()], throwingFind as never))).toMatchObject({
      message: "langgraph-tool-repair: findToolCallProblems: arguments could not be read (y)",
    });
  });

  it("a prototype key never answers for a table: an inherited provider is refused", () => {
    const options = Object.create({ provider: "openai" });
    // Only own properties count: the inherited provider is ignored, the default applies.
    expect(createRepairer(options).options.provider).toBe("strict");
  });

  it("a throwing or empty synthetic text falls back to the default; a throwing onRepair does not undo the repair", () => {
    const r = repairToolCalls([human(), aiWithCalls("a"), human("next")], {
      provider: "openai",
      syntheticResultText: () => {
        throw new Error("boom");
      },
      onRepair: () => {
        throw new Error("reporter down");
      },
    });
    expect(shape(r.messages)).toBe("human, ai[a], tool(a), human");
    expect(String(r.messages[2].content)).toContain("its outcome is unknown");
  });
});

describe("input the engine cannot read", () => {
  it("a hole in a sparse array is named, not waved through", () => {
    const sparse = [human(), , ai()] as BaseMessage[]; // eslint-disable-line no-sparse-arrays
    expect(() => repairToolCalls(sparse)).toThrow(/messages\[1\] is a hole/);
    // isCleanHistory says what repairToolCalls says (it used to answer false), also when the walk stops earlier.
    expect(() => isCleanHistory(sparse)).toThrow(/messages\[1\] is a hole/);
    expect(() => createRepairer().isClean(sparse)).toThrow(ToolCallRepairInputError);
    const sparseLater = [human(), aiWithCalls("a"), human(), , ai()] as BaseMessage[]; // eslint-disable-line no-sparse-arrays
    expect(() => isCleanHistory(sparseLater)).toThrow(/messages\[3\] is a hole/);
    expect(() => findToolCallProblems(sparseLater)).toThrow(/messages\[3\] is a hole/);
  });

  it("a revoked array proxy is refused naming the argument and the function, not 'Cannot perform IsArray'", () => {
    const { proxy, revoke } = Proxy.revocable([] as BaseMessage[], {});
    revoke();
    for (const [name, call] of [
      ["repairToolCalls", () => repairToolCalls(proxy)],
      ["isCleanHistory", () => isCleanHistory(proxy)],
      ["findToolCallProblems", () => findToolCallProblems(proxy)],
    ] as const) {
      const error = errorOf(call);
      expect(ToolCallRepairInputError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        argument: "messages",
        message: `langgraph-tool-repair: ${name}: messages is an unreadable object; expected an array of messages`,
      });
    }
    expect(errorOf(() => repairToolCalls(null as never))).toMatchObject({
      message: "langgraph-tool-repair: repairToolCalls: messages is null; expected an array of messages",
    });
  });

  it("a throwing getter and a revoked proxy become input errors that name the function, with the cause", () => {
    const throwing = new HumanMessage("hi");
    Object.defineProperty(throwing, "content", {
      get: () => {
        throw new Error("getter boom");
      },
    });
    expect(() => repairToolCalls([human(), throwing])).toThrow(ToolCallRepairInputError);
    const { proxy, revoke } = Proxy.revocable(new HumanMessage("hi"), {});
    revoke();
    const error = (() => {
      try {
        repairToolCalls([human(), proxy]);
      } catch (e) {
        return e;
      }
    })();
    expect(ToolCallRepairInputError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/^langgraph-tool-repair: repairToolCalls: arguments could not be read/);
    expect((error as Error).cause).toBeInstanceOf(TypeError);
  });

  it("cyclic arguments and cyclic content are read without 'Converting circular structure to JSON'", () => {
    const args: Record<string, unknown> = { q: "x" };
    args.self = args;
    const invalid = new AIMessage({
      content: "",
      tool_calls: [],
      invalid_tool_calls: [{ id: "bad1", name: "f", args: args as never, error: "oops", type: "invalid_tool_call" }],
    });
    const block: Record<string, unknown> = { type: "text", text: "data" };
    block.self = block;
    const first = new ToolMessage({ content: [block] as never, tool_call_id: "a" });
    const second = new ToolMessage({ content: [{ type: "text", text: "other" }, block] as never, tool_call_id: "a" });
    const r = repairToolCalls([human(), invalid, human("x"), aiWithCalls("a"), first, second, human("y")]);
    expect(r.repairs.map((x) => x.action)).toEqual(
      expect.arrayContaining(["promoted_invalid_call", "converted_result"]),
    );
    expect(String(r.messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === "bad1")?.content)).toContain(
      "[Circular]",
    );
  });

  it("content that is a number is coerced once: the repair is idempotent", () => {
    const odd = new AIMessage({ content: "x", tool_calls: [] });
    Object.assign(odd, { content: 42 });
    const once = repairToolCalls([human(), odd]);
    expect(once.repairs.map((r) => r.action)).toEqual(["coerced_message"]);
    expect(once.messages[1].content).toBe("42");
    expect(repairToolCalls(once.messages).repairs).toEqual([]);
  });

  it("bare strings inside a content array (LangChain Python) become text blocks, nothing dropped", () => {
    const python = new HumanMessage({ content: ["first part", { type: "text", text: "second" }] as never, id: "h" });
    const r = repairToolCalls([python], { provider: "openai" });
    expect(r.messages[0].content).toEqual([
      { type: "text", text: "first part" },
      { type: "text", text: "second" },
    ]);
    expect(r.messages[0].id).toBe("h");
  });
});

describe("LangChain's stored format ({ type, data })", () => {
  it("is read with LangChain's own mapping: text, calls and results all kept", () => {
    const thread = [human("weather?"), aiWithCalls("a", "b"), toolResult("a", "sunny"), human("and b?")];
    const stored = mapChatMessagesToStoredMessages(thread);
    const r = repairToolCalls(stored as never[], { provider: "openai" });
    expect(shape(r.messages as BaseMessage[])).toBe("human, ai[a,b], tool(a), tool(b), human");
    expect((r.messages as BaseMessage[]).map((m) => m.content)[2]).toBe("sunny");
    expect((r.messages as BaseMessage[])[0].content).toBe("weather?");
    expect(r.repairs.filter((x) => x.action === "coerced_message")).toHaveLength(4);
  });

  it("a shape the package cannot read is an error naming its index, never an empty message", () => {
    expect(() => repairToolCalls([human(), { type: "ai", data: "nope" } as never])).toThrow(
      /messages\[1\] is a stored message of type "ai" whose data is a string/,
    );
    expect(() => repairToolCalls([human(), { role: "user" } as never])).toThrow(
      /messages\[1\] is a "user" message with no content/,
    );
    expect(() => repairToolCalls([human(), { type: "tool", data: { content: "x" } } as never])).toThrow(
      /messages\[1\] is a stored message of type "tool" that LangChain cannot read/,
    );
  });

  it("a stored message with no content is refused naming its index (it was coerced empty, then removed as empty)", () => {
    for (const data of [{}, { content: null }, { tool_calls: [] }]) {
      for (const type of ["human", "ai", "system", "tool"]) {
        const error = errorOf(() => repairToolCalls([human(), { type, data } as never]));
        expect(error).toMatchObject({
          name: "ToolCallRepairInputError",
          index: 1,
          message: `langgraph-tool-repair: messages[1] is a stored message of type "${type}" whose data has no content`,
        });
        expect(errorOf(() => findToolCallProblems([human(), { type, data } as never]))).toMatchObject({ index: 1 });
      }
    }
    // An assistant turn that carries only calls is readable (OpenAI-style), as on the plain-object path.
    const callsOnly = { type: "ai", data: { tool_calls: [{ id: "a", name: "f", args: {} }] } };
    const r = repairToolCalls([human(), callsOnly as never, toolResult("a")]);
    expect(r.repairs.map((x) => x.action)).toEqual(["coerced_message"]);
    expect(shape(r.messages as BaseMessage[])).toBe("human, ai[a], tool(a)");
  });
});

describe("no stale verdict: a message changed in place is seen", () => {
  it("a call pushed into tool_calls after a clean check (langchain's human-in-the-loop middleware does this)", () => {
    const repairer = createRepairer();
    const h = [human(), aiWithCalls("a"), toolResult("a"), ai("done"), human("next")];
    expect(repairer.repair(h).repairs).toEqual([]);
    (h[1] as AIMessage).tool_calls!.push({ id: "b", name: "f", args: {}, type: "tool_call" });
    expect(repairer.isClean(h)).toBe(false);
    expect(repairer.repair(h).repairs.map((r) => r.action)).toContain("synthesized_result");
  });

  it("a result's tool_call_id changed, or its content emptied, after a clean check", () => {
    const repairer = createRepairer({ provider: "bedrock" });
    const h = [human(), aiWithCalls("a"), toolResult("a"), ai("done"), human("next")];
    expect(repairer.isClean(h)).toBe(true);
    (h[2] as ToolMessage).tool_call_id = "zzz";
    expect(repairer.isClean(h)).toBe(false);
    (h[2] as ToolMessage).tool_call_id = "a";
    expect(repairer.isClean(h)).toBe(true);
    (h[2] as ToolMessage).content = "";
    expect(repairer.isClean(h)).toBe(false);
    expect(repairer.repair(h).repairs.map((r) => r.action)).toEqual(["filled_empty_result"]);
  });

  it("a new array holding the same messages is judged on its own, and agrees with the finders", () => {
    const repairer = createRepairer();
    const h = [human(), aiWithCalls("a"), toolResult("a"), ai("done")];
    expect(repairer.isClean(h)).toBe(true);
    const copy = [...h, human("x"), human("y")];
    expect(repairer.isClean(copy)).toBe(findToolCallProblems(copy).length === 0);
  });

  it("a throw in the middle of a walk leaves nothing behind: the next check of an earlier history is right", () => {
    const repairer = createRepairer();
    const open = [human(), aiWithCalls("a"), human("next")];
    const throwing = new HumanMessage("x");
    Object.defineProperty(throwing, "content", {
      get: () => {
        throw new Error("boom");
      },
    });
    expect(() => repairer.isClean([human(), aiWithCalls("b"), toolResult("b"), throwing])).toThrow(
      ToolCallRepairInputError,
    );
    expect(repairer.isClean(open)).toBe(false);
  });
});

/**
 * Values an attacker or a buggy caller might pass where messages or ids belong. Generated as recipes and built
 * inside the property: fast-check itself inspects generated values, and a revoked proxy throws on any look.
 */
type Recipe =
  | { kind: "leaf"; value: unknown }
  | { kind: "cyclic" }
  | { kind: "throwing" }
  | { kind: "revoked" }
  | { kind: "frozen" }
  | { kind: "record"; entries: [string, Recipe][] };

const leafArb = fc.oneof(
  fc.constant(null),
  fc.constant(undefined),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string(),
  fc.constant("x".repeat(100_000)),
  fc.bigInt(),
  fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "symbol"),
);

const recipeArb: fc.Arbitrary<Recipe> = fc.oneof(
  leafArb.map((value): Recipe => ({ kind: "leaf", value })),
  fc.constantFrom<Recipe>({ kind: "cyclic" }, { kind: "throwing" }, { kind: "revoked" }, { kind: "frozen" }),
  fc
    .array(
      fc.tuple(
        fc.constantFrom("role", "type", "content", "tool_calls", "tool_call_id", "id", "data", "__proto__"),
        leafArb,
      ),
      { maxLength: 4 },
    )
    .map((pairs): Recipe => ({ kind: "record", entries: pairs.map(([k, v]) => [k, { kind: "leaf", value: v }]) })),
);

function build(recipe: Recipe): unknown {
  switch (recipe.kind) {
    case "leaf":
      return recipe.value === "symbol" ? Symbol("s") : recipe.value;
    case "cyclic": {
      const o: Record<string, unknown> = { type: "text", text: "c" };
      o.self = o;
      return o;
    }
    case "throwing":
      return Object.defineProperty({}, "content", {
        enumerable: true,
        get: () => {
          throw new Error("getter");
        },
      });
    case "revoked": {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }
    case "frozen":
      return Object.freeze(new HumanMessage("frozen"));
    case "record": {
      const o: Record<string, unknown> = {};
      for (const [k, v] of recipe.entries)
        Object.defineProperty(o, k, { value: build(v), enumerable: true, writable: true, configurable: true });
      return o;
    }
  }
}

/** A message whose fields hold hostile values (a real LangChain instance, changed after construction), or a hostile value. */
const itemArb = fc.oneof(
  recipeArb.map((recipe) => ({ recipe })),
  fc
    .tuple(fc.constantFrom("ai", "tool", "human"), recipeArb, recipeArb, recipeArb)
    .map(([kind, a, b, c]) => ({ message: kind, a, b, c })),
  fc.constant({ plain: true }),
);

function materialize(item: {
  recipe?: Recipe;
  message?: string;
  a?: Recipe;
  b?: Recipe;
  c?: Recipe;
  plain?: boolean;
}): unknown {
  if (item.plain) return human();
  if (item.recipe) return build(item.recipe);
  const [a, b, c] = [build(item.a!), build(item.b!), build(item.c!)];
  const m =
    item.message === "ai"
      ? new AIMessage({ content: "x", tool_calls: [] })
      : item.message === "tool"
        ? new ToolMessage({ content: "x", tool_call_id: "t" })
        : new HumanMessage("x");
  if (item.message === "ai")
    Object.assign(m, {
      tool_calls: [{ id: a, name: b, args: c }],
      additional_kwargs: { tool_calls: [{ id: b }] },
      content: [c, { type: "tool_use", id: a }],
    });
  else if (item.message === "tool") Object.assign(m, { tool_call_id: a, content: [b, c] });
  else Object.assign(m, { content: [a, b] });
  return m;
}

/** The only error the package throws on input: one that names the argument (and the message index). */
const allowedError = (error: unknown) =>
  ToolCallRepairInputError.isInstance(error) &&
  /message|options|error|rejection|arguments could not be read/.test((error as Error).message);

describe("hostile input (fast-check): only clear errors, no mutation, no hang", () => {
  const publicCalls: [string, (messages: unknown[]) => unknown][] = [
    ["repairToolCalls", (m) => repairToolCalls(m as never)],
    [
      "repairToolCalls bedrock structural",
      (m) => repairToolCalls(m as never, { provider: "bedrock", level: "structural" }),
    ],
    ["repairToolCalls strict, no tools in the request", (m) => repairToolCalls(m as never, { toolsInRequest: false })],
    [
      "findToolCallProblems bedrock, no tools in the request",
      (m) => findToolCallProblems(m, { provider: "bedrock", toolsInRequest: false }),
    ],
    ["findToolCallProblems", (m) => findToolCallProblems(m)],
    ["isCleanHistory", (m) => isCleanHistory(m)],
    ["trailingOpenExchange", (m) => trailingOpenExchange(m as never)],
    ["resumableExchange", (m) => resumableExchange(m as never)],
    ["toolCallIdsOf", (m) => m.map((x) => toolCallIdsOf(x))],
    [
      "forceRepairToolCalls",
      (m) =>
        forceRepairToolCalls(
          m as never,
          { provider: "bedrock", kind: "missing_results", rule: "B1", toolCallIds: ["t"], text: "x" } as never,
        ),
    ],
    [
      "forceRepairToolCalls B3",
      (m) =>
        forceRepairToolCalls(
          m as never,
          { provider: "bedrock", kind: "tool_config_missing", rule: "B3", toolCallIds: [], text: "x" } as never,
        ),
    ],
  ];

  it.each(publicCalls)("%s", (_name, call) => {
    fc.assert(
      fc.property(fc.array(itemArb, { maxLength: 8 }), (items) => {
        const messages = items.map(materialize);
        const snapshot = messages.map((m) => {
          if (typeof m !== "object" || m === null) return m;
          try {
            return { ...(m as object) };
          } catch {
            return undefined; // unreadable: a throwing getter, a revoked proxy
          }
        });
        try {
          call(messages);
        } catch (error) {
          expect(allowedError(error), String((error as Error)?.stack ?? error)).toBe(true);
        }
        // Nothing was changed in place (each object keeps the same own values).
        messages.forEach((m, i) => {
          if (typeof m !== "object" || m === null || snapshot[i] === undefined) return;
          let same = true;
          try {
            for (const [key, value] of Object.entries(snapshot[i] as object))
              if (!Object.is((m as Record<string, unknown>)[key], value)) same = false;
          } catch {
            return; // unreadable (revoked) before and after
          }
          expect(same).toBe(true);
        });
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: 60_000 },
    );
  });

  it("parseToolPairingError takes anything", () => {
    fc.assert(
      fc.property(recipeArb, (recipe) => {
        try {
          parseToolPairingError(build(recipe));
        } catch (error) {
          expect(allowedError(error)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
