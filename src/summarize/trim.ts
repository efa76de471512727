/**
 * core's `trimMessages` with a valid result. `trimMessages` counts tokens and message types only: it can
 * keep a tool result whose call was trimmed away (a history that starts with a ToolMessage, rejected by
 * OpenAI O2, Anthropic A2, Bedrock B2), or, with `strategy: "first"` or `endOn`, end on calls whose results
 * were cut (O1, A1, B1).
 *
 * The fix never exceeds the budget: where `trimMessages` split an exchange, the split exchange is dropped
 * (the kept window shrinks), unlike summarization, which keeps more.
 *
 * Cost: core's `trimMessages` drops one message per count (a history of n messages trimmed to a few costs n
 * counts of up to n messages: quadratic). Here the number of messages that fit is found first by binary
 * search (O(log n) counts), and core trims only that window plus the one message it may shorten
 * (`allowPartial`). The counter must not decrease as messages are added (as core's result already assumes).
 */
import { trimMessages, type BaseMessage } from "@langchain/core/messages";
import { ToolCallRepairInputError, boundary, describeInput } from "../errors";
import { rebuildMessage } from "../messages/build";
import { isToolResult } from "../messages/inspect";
import { isDict, type Dict } from "../values";
import { pairToolCalls, smallestFittingCutAsync, type ToolCallPairing } from "./boundary";
import {
  asyncCounter,
  booleanOption,
  choiceOption,
  countOption,
  optionsObject,
  ownOption,
  readMessageList,
} from "./input";

export type TrimMessagesOptions = Parameters<typeof trimMessages>[1];

/** A kept window `[start, end)` of the original messages. */
export interface KeptWindow {
  start: number;
  end: number;
}

/**
 * Like `trimMessages(messages, options)`, then made valid:
 * - no kept tool result whose call was trimmed, and no leading tool result: the window start moves forward
 *   past them (and past the rest of their exchange);
 * - no kept assistant message whose results were trimmed: the window end moves back before it;
 * - `startOn` / `endOn` hold again after those moves.
 *
 * Messages are those `trimMessages` returned (it copies them; with `allowPartial` the first or last one may
 * be shortened, never the caller's own message). Problems the input already had (a call answered nowhere) are
 * not the trim's doing and are left for `repairToolCalls`. A history ending on open calls keeps them
 * (`strategy: "last"` without `endOn`).
 *
 * Bad arguments get a {@link ToolCallRepairInputError} naming them; what the token counter or text splitter
 * throws propagates unchanged. O(n log n) counted messages for a counter linear in its input.
 */
export const trimMessagesSafely = boundary(
  "trimMessagesSafely",
  async function trimMessagesSafely(messages: BaseMessage[], options: TrimMessagesOptions): Promise<BaseMessage[]> {
    const fn = "trimMessagesSafely";
    const list = readMessageList(messages, fn);
    const trim = readTrimOptions(options, fn);
    return trim.strategy === "first" ? trimFirstSafely(list, trim) : trimLastSafely(list, trim);
  },
);

/** The options, validated; types as type strings; the counter wrapped (and used by core too). */
interface Trim {
  strategy: "first" | "last";
  maxTokens: number;
  count: (messages: BaseMessage[]) => Promise<number>;
  includeSystem: boolean;
  allowPartial: boolean;
  startOn: ReadonlySet<string> | undefined;
  endOn: ReadonlySet<string> | undefined;
  /** What core's `trimMessages` gets: the caller's options with the wrapped counter and type strings. */
  core: TrimMessagesOptions;
}

const TRIM_SHAPE =
  "{ maxTokens: n >= 0, tokenCounter, strategy?, startOn?, endOn?, includeSystem?, allowPartial?, textSplitter? }";

function readTrimOptions(options: unknown, fn: string): Trim {
  const record = optionsObject(options, fn, TRIM_SHAPE);
  const maxTokens = countOption(record, "maxTokens");
  if (maxTokens === undefined)
    throw new ToolCallRepairInputError(`${fn}: options.maxTokens is required; expected ${TRIM_SHAPE}`, {
      argument: "options.maxTokens",
    });
  const count = listCounter(ownOption(record, "tokenCounter"));
  const strategy = choiceOption(record, "strategy", ["first", "last"] as const) ?? "last";
  const includeSystem = booleanOption(record, "includeSystem") ?? false;
  const allowPartial = booleanOption(record, "allowPartial") ?? false;
  const startOn = typeSet(ownOption(record, "startOn"), "options.startOn");
  const endOn = typeSet(ownOption(record, "endOn"), "options.endOn");
  if (strategy === "first" && (startOn || includeSystem))
    throw new ToolCallRepairInputError(
      `${fn}: options.${startOn ? "startOn" : "includeSystem"} applies to strategy "last" only`,
      {
        argument: `options.${startOn ? "startOn" : "includeSystem"}`,
      },
    );
  const splitter = ownOption(record, "textSplitter");
  const splits = typeof splitter === "function" || (isDict(splitter) && typeof splitter.splitText === "function");
  if (splitter !== undefined && !splits)
    throw new ToolCallRepairInputError(
      `options.textSplitter is ${describeInput(splitter)}; expected a function or a text splitter`,
      { argument: "options.textSplitter" },
    );
  const core = {
    ...(record as unknown as TrimMessagesOptions),
    tokenCounter: count,
    strategy,
    startOn: startOn && [...startOn],
    endOn: endOn && [...endOn],
  } as TrimMessagesOptions;
  return { strategy, maxTokens, count, includeSystem, allowPartial, startOn, endOn, core };
}

/** The counter for a list: the caller's function, or a model's `getNumTokens` summed over contents (as core does). */
function listCounter(counter: unknown): (messages: BaseMessage[]) => Promise<number> {
  const path = "options.tokenCounter";
  if (typeof counter === "function") return asyncCounter(counter as (m: BaseMessage[]) => unknown, path);
  if (isDict(counter) && typeof counter.getNumTokens === "function") {
    const model = counter as { getNumTokens(content: unknown): Promise<number> };
    return asyncCounter(async (messages) => {
      const counts = await Promise.all(messages.map((m) => model.getNumTokens(m.content)));
      return counts.reduce((sum, n) => sum + n, 0);
    }, path);
  }
  throw new ToolCallRepairInputError(
    `${path} is ${describeInput(counter)}; expected a function or a model with getNumTokens`,
    { argument: path },
  );
}

const MESSAGE_TYPES = new Set(["human", "ai", "generic", "developer", "system", "function", "tool", "remove"]);

/** `startOn` / `endOn` as type strings, resolved once (core builds a message of each class per message checked). */
function typeSet(value: unknown, path: string): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  const types = new Set<string>();
  for (const t of Array.isArray(value) ? value : [value]) types.add(typeName(t, path));
  return types;
}

function typeName(t: unknown, path: string): string {
  if (typeof t === "string" && MESSAGE_TYPES.has(t)) return t;
  if (typeof t === "function") {
    let type: unknown;
    try {
      type = (new (t as new (fields: object) => BaseMessage)({}) as Partial<BaseMessage>).getType?.();
    } catch {
      type = undefined;
    }
    if (typeof type === "string") return type;
  }
  throw new ToolCallRepairInputError(
    `${path} is ${describeInput(t)}; expected message types (${[...MESSAGE_TYPES].join(", ")}) or message classes`,
    {
      argument: path,
    },
  );
}

async function trimFirstSafely(messages: BaseMessage[], trim: Trim): Promise<BaseMessage[]> {
  // The longest prefix that fits; core then trims it plus the next message (the one allowPartial may shorten).
  const fitting = await largestFittingCount(messages.length, (k) => trim.count(messages.slice(0, k)), trim.maxTokens);
  const input = messages.slice(0, Math.min(messages.length, fitting + 1));
  // core shortens the message after the prefix in place: hand it a copy, never the caller's own.
  if (trim.allowPartial && fitting < messages.length) input[fitting] = rebuildMessage(messages[fitting], {});
  const trimmed = await trimMessages(input, trim.core);
  // "first" keeps a prefix: trimmed[j] stands for messages[j].
  const window = windowOf(messages, { start: 0, end: trimmed.length }, trim);
  return trimmed.slice(window.start, window.end);
}

async function trimLastSafely(messages: BaseMessage[], trim: Trim): Promise<BaseMessage[]> {
  // endOn is applied here, before trimming (as trimMessages does), so that the result maps back by position.
  const end = applyEndOn(messages, messages.length, 0, trim.endOn);
  const head = trim.includeSystem && end > 0 && messages[0].getType() === "system" ? 1 : 0;
  const system = messages.slice(0, head);
  // The earliest start whose tail fits (counted as core counts it: system first, then the tail newest first).
  const fits = async (cut: number) =>
    (await trim.count([...system, ...messages.slice(cut, end).reverse()])) <= trim.maxTokens;
  const fitStart = await smallestFittingCutAsync(head, end, fits);
  const from = Math.max(head, fitStart - 1); // one more: the message allowPartial may shorten
  const input = [...system, ...messages.slice(from, end)];
  // With includeSystem and a budget that fits nothing, core returns `[undefined]`: drop the hole.
  const trimmed = (await trimMessages(input, { ...trim.core, endOn: undefined })).filter(
    (m): m is BaseMessage => m !== undefined,
  );
  const keptSystem = trimmed.length > 0 && head === 1 && trimmed[0].getType() === "system" ? 1 : 0;
  const start = end - (trimmed.length - keptSystem);
  const window = windowOf(messages, { start: Math.max(start, keptSystem), end }, trim);
  const tail = trimmed.slice(keptSystem + (window.start - start), keptSystem + (window.end - start));
  return [...trimmed.slice(0, keptSystem), ...tail];
}

/** The largest k in [0, n] whose count fits (0 when none does). */
async function largestFittingCount(
  n: number,
  count: (k: number) => Promise<number>,
  maxTokens: number,
): Promise<number> {
  const cut = await smallestFittingCutAsync(0, n, async (c) => (await count(n - c)) <= maxTokens);
  return n - cut;
}

/**
 * Shrink a window until it splits no exchange and `startOn` / `endOn` hold: the largest end, then the smallest
 * start, that do. Linear in the window. One pass each is a fixed point: moving the start forward only removes
 * messages the end had to respect, and moving the end back only removes results the start had to respect.
 */
export function safeWindow(
  messages: readonly BaseMessage[],
  window: KeptWindow,
  options: Pick<TrimMessagesOptions, "startOn" | "endOn"> = {},
): KeptWindow {
  const endOn = typeSet((options as Dict).endOn, "options.endOn");
  const startOn = typeSet((options as Dict).startOn, "options.startOn");
  return windowOf(messages, window, { startOn, endOn });
}

function windowOf(
  messages: readonly BaseMessage[],
  window: KeptWindow,
  types: Pick<Trim, "startOn" | "endOn">,
): KeptWindow {
  const pairing = pairToolCalls(messages);
  const last = Math.max(0, Math.min(messages.length, window.end));
  const first = Math.max(0, Math.min(last, window.start));
  const end = safeEnd(messages, pairing, first, last, types.endOn);
  return { start: safeStart(messages, pairing, first, end, types.startOn), end };
}

/**
 * The largest end `e <= end` such that no assistant message in `[start, e)` has a result at or after `e`, and
 * the window ends on `endOn` (or is empty). Each move of the original fixed point was necessary, so this is
 * where it stopped; one prefix maximum makes it linear.
 */
function safeEnd(
  messages: readonly BaseMessage[],
  pairing: ToolCallPairing,
  start: number,
  end: number,
  endOn: ReadonlySet<string> | undefined,
): number {
  // latest[j - start]: the latest result of any assistant message in [start, j).
  const latest = new Int32Array(end - start + 1);
  latest[0] = -1;
  for (let i = start; i < end; i++) latest[i - start + 1] = Math.max(latest[i - start], pairing.lastResultIndexOf[i]);
  for (let e = end; e > start; e--) {
    if (latest[e - start] < e && isOfType(messages[e - 1], endOn)) return e;
  }
  return start;
}

/**
 * The smallest start `s >= start` such that the window does not open on a tool result, no result in
 * `[s, end)` answers a call before `s`, and it opens on `startOn` (or is empty). One suffix minimum makes it
 * linear.
 */
function safeStart(
  messages: readonly BaseMessage[],
  pairing: ToolCallPairing,
  start: number,
  end: number,
  startOn: ReadonlySet<string> | undefined,
): number {
  // earliest[j - start]: the earliest caller of any result in [j, end) (end: none).
  const earliest = new Float64Array(end - start + 1);
  earliest[end - start] = Infinity;
  for (let i = end - 1; i >= start; i--)
    earliest[i - start] = Math.min(earliest[i - start + 1], pairing.callIndexOf[i] ?? Infinity);
  for (let s = start; s < end; s++) {
    if (earliest[s - start] >= s && !isToolResult(messages[s]) && isOfType(messages[s], startOn)) return s;
  }
  return end;
}

function applyEndOn(
  messages: readonly BaseMessage[],
  end: number,
  start: number,
  endOn: ReadonlySet<string> | undefined,
): number {
  while (end > start && !isOfType(messages[end - 1], endOn)) end--;
  return end;
}

/** Whether a message is of one of `types` (no types: any message is). */
function isOfType(message: BaseMessage, types: ReadonlySet<string> | undefined): boolean {
  return types === undefined || types.has(message.getType());
}
