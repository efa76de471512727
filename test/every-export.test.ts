/**
 * The package's promise, checked on every export of the four entry points (src/index.ts, langgraph.ts,
 * langchain.ts, threads.ts) at once: called with hostile values (fast-check, fixed seed) as any argument,
 * a function returns, or returns a promise that settles, or throws / rejects with a ToolCallRepairInputError or
 * a TypeError with a message; never another error class, never a hang, never a change to its input (a frozen
 * input would make a change throw a TypeError, so that message is a failure here, and an input that is not
 * frozen is compared before and after). Errors of this package's own code must be clear: a raw TypeError from
 * deep inside ("Cannot read properties of null") fails too. The surfaces that run inside a user's graph never
 * fail the run, whatever state they are given.
 *
 * Classes are not constructed (they are the package's errors, which users catch, not build); their static
 * methods are called like the functions. Exports that need a real graph, saver or model get hostile values
 * only: they must refuse them clearly.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as indexEntry from "../src/index";
import * as langchainEntry from "../src/langchain";
import * as langgraphEntry from "../src/langgraph";
import * as threadsEntry from "../src/threads";

const SEED = 20_260_525;
const RUNS = Number(process.env.EXPORT_RUNS ?? 24);
/** A promise (or an async iterator's first step) that has not settled by then is a hang. */
const CALL_TIMEOUT_MS = 2_000;
const HUGE = "x".repeat(1_000_000);

/** Messages V8 gives to code that trusted its input: this package's own code must say something clearer. */
const RAW_TYPE_ERROR = new RegExp(
  [
    "Cannot read propert",
    "Cannot set propert",
    "is not a function",
    "is not iterable",
    "Cannot perform '",
    "Cannot convert",
    "Cannot destructure",
    "Do not know how to serialize",
    "Converting circular structure",
    "Cannot create proxy",
    "is not a constructor",
    "Cannot use 'in' operator",
  ].join("|"),
);
/** What a write to a frozen input throws in strict mode: the function tried to change its input. */
const MUTATION =
  /read only property|object is not extensible|Cannot add property|Cannot delete property|Cannot redefine property|Cannot assign to/;

// --- hostile values -------------------------------------------------------------------------------------------

const history = (): BaseMessage[] => [
  new HumanMessage({ content: "q", id: "h1" }),
  new AIMessage({
    content: "",
    id: "a1",
    tool_calls: [{ id: "c1", name: "lookup", args: { q: 1 }, type: "tool_call" }],
  }),
  new ToolMessage({ content: "r", tool_call_id: "c1", id: "t1" }),
  new HumanMessage({ content: "again", id: "h2" }),
  new AIMessage({ content: "", id: "a2", tool_calls: [{ id: "c2", name: "lookup", args: {}, type: "tool_call" }] }),
  new HumanMessage({ content: "next", id: "h3" }),
];

function deepFreeze<T>(value: T, seen = new Set<unknown>()): T {
  if ((typeof value !== "object" && typeof value !== "function") || value === null || seen.has(value)) return value;
  seen.add(value);
  for (const key of Reflect.ownKeys(value as object)) {
    const descriptor = Reflect.getOwnPropertyDescriptor(value as object, key);
    if (descriptor && "value" in descriptor) deepFreeze(descriptor.value, seen);
  }
  return Object.freeze(value);
}

const boom = (what: string) => () => {
  throw new Error(what);
};

/** Every trap throws: get, has, key listing, descriptors, prototype. */
const throwingProxy = (target: object = {}) =>
  new Proxy(target, {
    get: boom("GET"),
    has: boom("HAS"),
    ownKeys: boom("KEYS"),
    getOwnPropertyDescriptor: boom("DESC"),
    getPrototypeOf: boom("PROTO"),
  });

function revoked(target: object): object {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

function cyclic(): Record<string, unknown> {
  const o: Record<string, unknown> = { type: "object", role: "user", content: "c", messages: [] };
  o.self = o;
  (o.messages as unknown[]).push(o);
  o.properties = { a: o };
  return o;
}

/** A value that looks like the thing each argument takes (options, state, a message) with a getter that throws. */
const throwingGetters = () =>
  Object.defineProperties(
    {},
    Object.fromEntries(
      [
        "messages",
        "provider",
        "content",
        "type",
        "jsonSchema",
        "invocationParams",
        "nodes",
        "getState",
        "list",
        "toolCallIds",
        "model",
        "env",
      ].map((key) => [key, { enumerable: true, get: boom(`getter ${key}`) }]),
    ),
  );

function throwingIndex(): BaseMessage[] {
  const list = history();
  Object.defineProperty(list, 2, { enumerable: true, get: boom("index 2") });
  return list;
}

type Hostile = { label: string; make: () => unknown; frozen?: boolean };

const HOSTILE: Hostile[] = [
  { label: "null", make: () => null },
  { label: "undefined", make: () => undefined },
  { label: "NaN", make: () => Number.NaN },
  { label: "-1", make: () => -1 },
  { label: "1.5", make: () => 1.5 },
  { label: "bigint", make: () => 10n },
  { label: "symbol", make: () => Symbol("s") },
  { label: "huge string", make: () => HUGE },
  { label: "string", make: () => "openai" },
  { label: "function", make: () => () => undefined },
  { label: "cyclic object", make: cyclic },
  { label: "throwing proxy", make: () => throwingProxy() },
  { label: "throwing getters", make: throwingGetters },
  { label: "revoked object", make: () => revoked({}) },
  { label: "revoked array", make: () => revoked([]) },
  { label: "frozen history", make: () => deepFreeze(history()), frozen: true },
  {
    label: "frozen options",
    make: () => deepFreeze({ provider: "openai", messages: history(), messagesKey: "messages" }),
    frozen: true,
  },
  { label: "frozen state", make: () => deepFreeze({ messages: history() }), frozen: true },
  { label: "sparse array", make: () => [new HumanMessage("q"), , new AIMessage("a")] }, // eslint-disable-line no-sparse-arrays
  { label: "array of junk", make: () => [null, undefined, 42, "x", Symbol("s"), {}] },
  { label: "throwing index", make: throwingIndex },
  {
    label: "__proto__ keys",
    make: () =>
      JSON.parse(
        '{"__proto__": {"provider": "openai", "messages": []}, "provider": "toString", "constructor": 1, "role": "__proto__"}',
      ),
  },
  { label: "history", make: history },
  { label: "state", make: () => ({ messages: history() }) },
  {
    label: "stored messages",
    make: () => [
      { type: "human", data: {} },
      { type: "ai", data: null },
      { lc: 1, type: "constructor", id: ["x"], kwargs: 1 },
    ],
  },
];

/** Plausible values for the other arguments, so that the hostile one is reached. */
const PLAUSIBLE: Hostile[] = [
  { label: "history", make: history },
  { label: "undefined", make: () => undefined },
  { label: "{}", make: () => ({}) },
  { label: "state", make: () => ({ messages: history() }) },
];

const hostileArb = fc.constantFrom(...HOSTILE);
/** Up to four arguments: one hostile at a chosen position, the others plausible or hostile too. */
const argsArb = fc
  .integer({ min: 0, max: 3 })
  .chain((at) =>
    fc.tuple(
      fc.constant(at),
      hostileArb,
      fc.array(fc.oneof(fc.constantFrom(...PLAUSIBLE), hostileArb), { minLength: at, maxLength: 3 }),
    ),
  )
  .map(([at, hostile, others]) => {
    const args = [...others];
    args.splice(at, 0, hostile);
    return args;
  });

// --- reading what happened ----------------------------------------------------------------------------------

/** A never-throwing, cycle-safe rendering of a value's own data: equal before and after unless it changed. */
function fingerprint(value: unknown, seen = new Map<unknown, number>(), depth = 0): string {
  if (typeof value === "string")
    return value.length > 200 ? `"${value.slice(0, 50)}…(${value.length})"` : JSON.stringify(value);
  if (typeof value !== "object" && typeof value !== "function")
    return String(typeof value === "symbol" ? value.description : value);
  if (value === null) return "null";
  if (typeof value === "function") return "fn";
  if (seen.has(value)) return `#${seen.get(value)}`;
  if (depth > 12) return "…";
  seen.set(value, seen.size);
  try {
    const keys = Reflect.ownKeys(value).filter((k) => typeof k === "string");
    const parts = keys.map((k) => {
      try {
        const descriptor = Reflect.getOwnPropertyDescriptor(value, k);
        return `${String(k)}:${descriptor && "value" in descriptor ? fingerprint(descriptor.value, seen, depth + 1) : "get"}`;
      } catch {
        return `${String(k)}:?`;
      }
    });
    return `${Array.isArray(value) ? "[" : "{"}${parts.join(",")}${Array.isArray(value) ? "]" : "}"}`;
  } catch {
    return "unreadable";
  }
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  (typeof value === "object" || typeof value === "function") &&
  value !== null &&
  typeof (value as { then?: unknown }).then === "function";
const isAsyncIterator = (value: unknown): value is AsyncIterator<unknown> =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { next?: unknown }).next === "function" &&
  Symbol.asyncIterator in value;

function withTimeout<T>(promise: PromiseLike<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new HangError(`${what} did not settle within ${CALL_TIMEOUT_MS} ms`)),
      CALL_TIMEOUT_MS,
    );
  });
  return Promise.race([Promise.resolve(promise), timeout]).finally(() => clearTimeout(timer));
}

class HangError extends Error {}

type Outcome = { returned: unknown } | { threw: unknown };

/** Calls `fn`, waits for a promise (or an async iterator's first step) under the timeout. */
async function outcomeOf(fn: () => unknown, what: string): Promise<Outcome> {
  try {
    let value = fn();
    if (isThenable(value)) value = await withTimeout(value, what);
    if (isAsyncIterator(value)) {
      const iterator = value;
      await withTimeout(iterator.next(), `${what}: the first step`);
      await withTimeout(Promise.resolve(iterator.return?.()), `${what}: closing`).catch(() => undefined);
    }
    return { returned: value };
  } catch (error) {
    return { threw: error };
  }
}

/** What is wrong with an error thrown by `name` (undefined: it keeps the promise). */
function fault(_name: string, error: unknown): string | undefined {
  if (error instanceof HangError) return error.message;
  const message = error instanceof Error ? error.message : undefined;
  if (error instanceof TypeError && MUTATION.test(message ?? "")) return `tried to change a frozen input: ${message}`;
  if (!(error instanceof TypeError))
    return `threw ${error instanceof Error ? `${error.name}: ${error.message}` : `a non-error: ${String(error)}`}`;
  if (!message || message.trim() === "") return "threw a TypeError with an empty message";
  const ours = error.name === "ToolCallRepairInputError";
  if (!ours && RAW_TYPE_ERROR.test(message)) return `threw a raw TypeError: ${message}`;
  return undefined;
}

// --- the exports ----------------------------------------------------------------------------------------------

const ENTRIES = {
  index: indexEntry,
  langgraph: langgraphEntry,
  langchain: langchainEntry,
  threads: threadsEntry,
} as Record<string, Record<string, unknown>>;

const isClass = (value: unknown) =>
  typeof value === "function" && Function.prototype.toString.call(value).startsWith("class");

/** Every callable of the entries: functions, and the static methods of the exported classes. */
function callables(): { name: string; entry: string; fn: (...args: unknown[]) => unknown }[] {
  const found = new Map<string, { name: string; entry: string; fn: (...args: unknown[]) => unknown }>();
  for (const [entry, exports] of Object.entries(ENTRIES)) {
    for (const [name, value] of Object.entries(exports)) {
      if (typeof value !== "function" || found.has(name)) continue;
      if (!isClass(value)) {
        found.set(name, { name, entry, fn: value as (...args: unknown[]) => unknown });
        continue;
      }
      for (const key of Object.getOwnPropertyNames(value)) {
        const method = (value as unknown as Record<string, unknown>)[key];
        if (typeof method === "function" && !["length", "name", "prototype"].includes(key))
          found.set(`${name}.${key}`, {
            name: `${name}.${key}`,
            entry,
            fn: (method as (...args: unknown[]) => unknown).bind(value),
          });
      }
    }
  }
  return [...found.values()];
}

const CALLABLES = callables();

const SUMMARIZATION = {
  model: { invoke: async () => ({ content: "summary" }) },
  trigger: { messages: 2 },
  keep: { messages: 1 },
  onError: () => undefined,
};

/** The graph surfaces: what their factories return runs inside a user's graph and must never fail the run. */
const SURFACES: Record<string, () => (state: unknown, config?: unknown) => unknown> = {
  toolCallRepairNode: () => langgraphEntry.toolCallRepairNode({ onError: () => undefined }) as never,
  toolCallRepairHook: () => langgraphEntry.toolCallRepairHook({ onError: () => undefined }) as never,
  summarizationNode: () => langgraphEntry.summarizationNode(SUMMARIZATION) as never,
  summarizationHook: () => langgraphEntry.summarizationHook(SUMMARIZATION) as never,
};

describe("every export of the four entry points, called with hostile values", () => {
  it("finds the exports (the entries are read, classes are not constructed)", () => {
    const names = CALLABLES.map((c) => c.name);
    for (const name of [
      "repairToolCalls",
      "replaceAllMessages",
      "toolCallRepairNode",
      "repairStoredMessages",
      "toolCallRepairMiddleware",
      "ToolCallRepairInputError.isInstance",
    ])
      expect(names).toContain(name);
  });

  it.each(CALLABLES.map((c) => [c.name, c] as const))(
    "%s: returns, settles, or refuses clearly; never changes its input",
    async (_name, { name, fn }) => {
      const failures: string[] = [];
      await fc.assert(
        fc.asyncProperty(argsArb, async (recipes) => {
          const args = recipes.map((r) => r.make());
          const before = args.map((arg, i) => (recipes[i].frozen ? undefined : fingerprint(arg)));
          const call = `${name}(${recipes.map((r) => r.label).join(", ")})`;
          const outcome = await outcomeOf(() => fn(...args), call);
          if ("threw" in outcome) {
            const problem = fault(name, outcome.threw);
            if (problem) failures.push(`${call}: ${problem}`);
          }
          args.forEach((arg, i) => {
            if (before[i] !== undefined && fingerprint(arg) !== before[i])
              failures.push(`${call}: changed argument ${i} (${recipes[i].label})`);
          });
        }),
        { seed: SEED, numRuns: RUNS },
      );
      // Collected rather than thrown from the property: every failing call is listed, with its arguments.
      expect([...new Set(failures)]).toEqual([]);
    },
  );

  it.each(Object.keys(SURFACES))(
    "%s: what the factory returns never fails the run, whatever the state",
    async (name) => {
      const surface = SURFACES[name]();
      await fc.assert(
        fc.asyncProperty(hostileArb, async (recipe) => {
          const outcome = await outcomeOf(() => surface(recipe.make()), `${name}(${recipe.label})`);
          expect(
            "threw" in outcome ? `threw ${String((outcome as { threw: unknown }).threw)}` : "ok",
            recipe.label,
          ).toBe("ok");
        }),
        { seed: SEED, numRuns: HOSTILE.length * 2 },
      );
    },
  );
});
