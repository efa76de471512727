/**
 * Summarization on the safe boundary: once the trigger fires, the prefix found by the safe boundary
 * (`safeCutFrom`, as `findSafeSummarizationBoundary` cuts) is summarized by a chat model and the history
 * becomes `system + summary + tail`, so no tool call is ever split from its results. Every surface (node, hook,
 * createAgent middleware) takes the same options, langchain's `summarizationMiddleware` shape, read here once
 * ({@link readSummarization}) and run here ({@link summarizeRead}); the surfaces in src/integrations are thin
 * adapters.
 */
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { ToolCallRepairInputError, boundary, callersOwn, expectedInput } from "../errors";
import { kind, option, readOptions } from "../options";
import { callArgsText, distinctCalls, isAssistant, isToolResult, resultIdOf, turnOf } from "../messages/inspect";
import { fieldsOf, isDict, nonEmptyString } from "../values";
import { rebuildMessage } from "../messages/build";
import {
  approximateTokenCounter,
  asyncCounter,
  leadingSystemCount,
  readMessageList,
  safeCutFrom,
  smallestFittingCut,
} from "./boundary";

/** Anything with a chat model's `invoke`: a `BaseChatModel`, a bound model, a fake. */
export interface SummarizerModel {
  invoke(input: BaseMessage[], options?: RunnableConfig): Promise<{ content: unknown }>;
}

/** A size relative to the conversation (langchain's `ContextSize`): any of them. */
export interface ContextSize {
  /** Fraction (0 to 1] of the summarizer model's input limit (`model.profile.maxInputTokens`, required), in tokens. */
  fraction?: number;
  tokens?: number;
  messages?: number;
}

/**
 * When to summarize, as in langchain: one condition fires when the history reaches every limit it sets (`>=`,
 * AND); a list fires when any of its conditions does (OR).
 */
export type SummarizationTrigger = ContextSize | ContextSize[];

/**
 * What to keep verbatim (langchain's `KeepSize`): exactly one of the last `messages` messages, as many recent
 * messages as fit in `tokens` (the leading system messages included; the last message is always kept), or a
 * `fraction` of the summarizer model's input limit in tokens. The boundary keeps an exchange whole, so the kept
 * part may be larger by the rest of one exchange.
 */
export type KeepSize = { messages: number } | { tokens: number } | { fraction: number };

/** The options of every summarization surface (langchain's `summarizationMiddleware` options, where they make sense). */
export interface SummarizationOptions {
  /** The model that writes the summary. */
  model: SummarizerModel;
  trigger: SummarizationTrigger;
  /** What to keep verbatim. Keep it well below the trigger, or every turn summarizes. Default `{ messages: 20 }`. */
  keep?: KeepSize;
  /** Counts tokens for `trigger` and `keep` (may return a Promise). Default `approximateTokenCounter`. */
  tokenCounter?: (messages: BaseMessage[]) => number | Promise<number>;
  /** The summarizer's prompt, with `{messages}` where the transcript goes (sent as one user message). Default: ours. */
  summaryPrompt?: string;
  /** First line of the summary message. Default `"Summary of the conversation so far:"`. */
  summaryPrefix?: string;
  /**
   * At most this many tokens of the summarized messages are shown to the summarizer: the newest that fit (never
   * starting on a result without its call), after any earlier summary, which is always shown. Default: all of
   * them (langchain shows only the last 4,000 tokens by default, so most of a long prefix never reaches the
   * summary). Set it when the summarizer's context is smaller than what gets summarized.
   */
  trimTokensToSummarize?: number;
  /** Text of the assistant turn put after the summary when the kept part opens with a user message. */
  acknowledgement?: string;
}

/** Marks the messages this module writes (same key and value as langchain's summarization middleware). */
const SUMMARY_SOURCE = "summarization";
export const DEFAULT_SUMMARY_PREFIX = "Summary of the conversation so far:";
export const DEFAULT_ACKNOWLEDGEMENT = "Understood. I will continue from this summary.";
const EMPTY_SUMMARY = "(The summarizer returned no text; the earlier conversation is not available.)";
const SUMMARY_INSTRUCTIONS = [
  "You condense a conversation between a user, an assistant and its tools so it can continue without the original messages.",
  "Keep the user's goals, decisions, facts learned and open tasks. For each tool call, keep which tool was called with",
  "which arguments and what its result was (results name the call id they answer; two calls to the same tool are",
  "different calls). Do not invent results for calls that have none. Reply with the summary only.",
].join(" ");

/** Whether a message was written by this module (or langchain's summarization middleware). */
export const isSummaryMessage = (message: BaseMessage) => message.additional_kwargs?.lc_source === SUMMARY_SOURCE;

// --- options: one reader for every surface --------------------------------------------------------------------

/** {@link SummarizationOptions} as read (plus a surface's own options): what {@link summarizeRead} runs on. */
export type Summarization<M = SummarizerModel> = Omit<SummarizationOptions, "model" | "trigger" | "keep"> & {
  fn: string;
  model: M;
  trigger: ContextSize[];
  keep: ContextSize;
  count: Counter;
  onError?: (error: unknown) => void;
};

const TRIGGER_SHAPE =
  "{ messages?: n > 0, tokens?: n > 0, fraction?: 0 < f <= 1 } with at least one, or a list of them";
const KEEP_SHAPE = "exactly one of { messages: n >= 0 }, { tokens: n >= 0 }, { fraction: 0 <= f <= 1 }";
export const SUMMARIZER = kind(
  "a chat model (anything with invoke(messages))",
  (model) => typeof fieldsOf(model).invoke === "function",
);

/** The options every surface reads; a surface adds its own (`onError`, the middleware's `name`). */
export const SUMMARIZATION = {
  model: SUMMARIZER,
  trigger: option.object(TRIGGER_SHAPE),
  keep: option.object(KEEP_SHAPE),
  tokenCounter: option.fn,
  summaryPrompt: option.string,
  summaryPrefix: option.string,
  trimTokensToSummarize: kind("a number > 0", (n) => Number.isFinite(n) && (n as number) > 0),
  acknowledgement: option.string,
};

const SIZE = { messages: option.count, tokens: option.count, fraction: option.count };

/** A trigger condition (`trigger`: every limit > 0) or a keep size (`>= 0`), each limit checked. */
function readSize(value: unknown, fn: string, path: string, trigger: boolean) {
  const shape = trigger ? TRIGGER_SHAPE : KEEP_SHAPE;
  const size = readOptions<Record<string, number>>(value, fn, SIZE, path);
  for (const [key, n] of Object.entries(size))
    if ((trigger && !n) || (key === "messages" && !Number.isInteger(n)) || (key === "fraction" && n > 1))
      throw expectedInput(fn, `${path}.${key}`, shape, n);
  const given = Object.keys(size).length;
  if (trigger ? !given : given !== 1) throw expectedInput(fn, path, shape, value);
  return size;
}

/**
 * Reads the options of a summarization surface against `table` ({@link SUMMARIZATION} and the surface's own):
 * a {@link ToolCallRepairInputError} naming the option otherwise. `model` and `trigger` are required (without a
 * trigger, langchain's middleware never summarizes; no options at all is a missing `model`); a fraction needs the
 * model's input limit, checked here when the model is given as a model.
 */
export function readSummarization<M = SummarizerModel>(options: unknown, fn: string, table = SUMMARIZATION) {
  const read = readOptions<Summarization<M>>(options, fn, table);
  const { model, trigger, keep, summaryPrompt, tokenCounter } = read;
  for (const key of ["model", "trigger"] as const)
    if (read[key] === undefined) throw expectedInput(fn, `options.${key}`, table[key].expected, undefined);
  const conditions = [trigger]
    .flat()
    .map((c, i) => readSize(c, fn, Array.isArray(trigger) ? `options.trigger[${i}]` : "options.trigger", true));
  if (!conditions.length) throw expectedInput(fn, "options.trigger", TRIGGER_SHAPE, trigger);
  const kept = keep === undefined ? { messages: 20 } : readSize(keep, fn, "options.keep", false);
  if (summaryPrompt?.includes("{messages}") === false)
    throw expectedInput(fn, "options.summaryPrompt", "a string with a {messages} placeholder", summaryPrompt);
  if (typeof model !== "string" && [...conditions, kept].some((size) => "fraction" in size)) inputLimit(model, fn);
  return { ...read, fn, trigger: conditions, keep: kept, count: asyncCounter(tokenCounter ?? approximateTokenCounter) };
}

/**
 * The summarizer model's input limit: its profile's `maxInputTokens`. langchain falls back to core's
 * `getModelContextSize(name)`, which answers 4,097 for any name it does not know (every Bedrock and recent
 * Claude id): a fraction of that summarizes nearly every turn. Without a profile limit, a fraction is refused.
 */
function inputLimit(model: unknown, fn: string) {
  const limit = fieldsOf(fieldsOf(model).profile).maxInputTokens;
  if (typeof limit === "number" && limit > 0) return limit;
  throw new ToolCallRepairInputError(
    `${fn}: a fraction needs options.model.profile.maxInputTokens, which this model lacks; use tokens`,
    { argument: "options.model" },
  );
}

// --- running ---------------------------------------------------------------------------------------------------

/**
 * The summarized history (`system + summary + tail`), or undefined when there is nothing to do: the trigger has
 * not fired, nothing comes before the boundary, or nothing before it but an earlier summary. Bad arguments get a
 * {@link ToolCallRepairInputError}; what the summarizer model or a token counter throws propagates unchanged.
 */
export const summarizeHistory = boundary(
  "summarizeHistory",
  async (messages: BaseMessage[], options: SummarizationOptions, config?: RunnableConfig) => {
    const settings = readSummarization(options, "summarizeHistory");
    return summarizeRead(readMessageList(messages, settings.fn), settings, config);
  },
);

/** {@link summarizeHistory} of messages already read, with options already read. */
export async function summarizeRead(messages: BaseMessage[], settings: Summarization, config?: RunnableConfig) {
  const { model, count, keep, trimTokensToSummarize: limit, summaryPrompt: template } = settings;
  // A summary cannot shrink a tool result the kept part holds: when shortening oversized results in the request
  // brings it under the trigger, the summarizer is not called (the model is sent that request).
  if (!(await fires(await fittedRequest(messages, settings), settings))) return;
  const system = messages.slice(0, leadingSystemCount(messages));
  // The cut `keep` asks for, before the safe boundary moves it (never before the system messages); as langchain
  // does, the last message is always kept.
  const n = messages.length;
  const budget = tokenLimit(keep, settings);
  const cut = safeCutFrom(
    messages,
    budget === undefined
      ? n - keep.messages!
      : Math.min(await fittingCut(system, messages, system.length, Math.max(1, Math.floor(budget)), count), n - 1),
  );
  const [summarized, kept] = [messages.slice(system.length, cut), messages.slice(cut)];
  if (summarized.every(isSummaryMessage)) return;
  const transcript = limit ? await boundedTranscript(summarized, limit, count) : transcriptOf(summarized);
  // A function replacement: the transcript may hold `$&` and other patterns a string replacement expands.
  const prompt = template
    ? [new HumanMessage(template.replace("{messages}", () => transcript))]
    : [new SystemMessage(SUMMARY_INSTRUCTIONS), new HumanMessage(`Conversation to summarize:\n\n${transcript}`)];
  // "nostream" keeps the summary out of `streamMode: "messages"`, where it would look like the agent's reply.
  const response = await callersOwn(model.invoke.bind(model))(prompt, {
    ...config,
    tags: [...(config?.tags ?? []), "nostream"],
    metadata: { ...config?.metadata, lc_source: SUMMARY_SOURCE },
  });
  const text = contentText(isDict(response) ? response.content : response);
  return [...system, ...buildSummaryMessages(text, kept, settings), ...kept];
}

/** Whether `messages` reach the trigger: any condition (OR) whose every limit (AND) they reach (`>=`), as langchain's. */
async function fires(messages: BaseMessage[], settings: Summarization<unknown>) {
  let total: number | undefined;
  for (const size of settings.trigger) {
    const limit = tokenLimit(size, settings);
    if (
      messages.length >= (size.messages ?? 0) &&
      (limit === undefined || (total ??= await settings.count(messages)) >= limit)
    )
      return true;
  }
  return false;
}

/** The tokens a condition needs (`>=` all it sets): its `tokens`, and its `fraction` of the model's input limit. */
const tokenLimit = ({ tokens, fraction }: ContextSize, { model, fn }: Summarization<unknown>) =>
  fraction === undefined ? tokens : Math.max(tokens ?? 0, Math.floor(inputLimit(model, fn) * fraction));

/**
 * What the model is sent for `messages`: once they reach the trigger, every tool result counting more than a
 * quarter of the smallest token trigger is cut to about that size, with a note the model reads, in the request
 * only (the stored result is untouched). The same array when nothing is cut, or the trigger counts no tokens.
 */
export async function fittedRequest(messages: BaseMessage[], settings: Summarization<unknown>) {
  const limits = settings.trigger.flatMap((size) => tokenLimit(size, settings) ?? []);
  if (!limits.length || !(await fires(messages, settings))) return messages;
  const cap = Math.min(...limits) / 4;
  const out = await Promise.all(
    messages.map(async (m) => {
      const size = isToolResult(m) ? await settings.count([m]) : 0;
      const text = size > cap ? contentText(m.content) : "";
      const shown = Math.floor((text.length * cap) / size);
      const note = `[Shortened in this request: the first ${shown} of ${text.length} characters of this tool result.]`;
      return shown < text.length ? rebuildMessage(m, { content: `${text.slice(0, shown)}\n\n${note}` }) : m;
    }),
  );
  return out.some((m, i) => m !== messages[i]) ? out : messages;
}

/**
 * The transcript of `part` within `maxTokens`: earlier summaries (at its start) always, then the newest messages
 * that fit, cut on the safe boundary so that no result is shown without its call.
 */
async function boundedTranscript(part: BaseMessage[], maxTokens: number, count: Counter) {
  // `part` holds more than summaries (else nothing is summarized).
  const summaries = part.findIndex((m) => !isSummaryMessage(m));
  const [earlier, rest] = [part.slice(0, summaries), part.slice(summaries)];
  const cut = safeCutFrom(rest, await fittingCut(earlier, rest, 0, maxTokens, count));
  if (!cut) return transcriptOf(part);
  const omitted = `(${cut} earlier message${cut === 1 ? "" : "s"} omitted)`;
  return [transcriptOf(earlier), omitted, transcriptOf(rest.slice(cut))].filter(Boolean).join("\n");
}

/** The smallest cut in `[low, list.length]` for which `head + list[cut..]` counts at most `limit` tokens. */
type Counter = ReturnType<typeof asyncCounter>;
const fittingCut = (head: BaseMessage[], list: BaseMessage[], low: number, limit: number, count: Counter) =>
  smallestFittingCut(low, list.length, async (cut) => (await count([...head, ...list.slice(cut)])) <= limit);

/**
 * The messages that stand for the summarized prefix. The summary is a user message: Bedrock (B5) and Gemini
 * (G1) need the first non-system message to be a user turn, and an assistant message cannot carry context
 * that the model must treat as given. When the tail opens with a user message, a short assistant turn
 * follows the summary so roles still alternate (Bedrock B6, Gemini G1).
 */
export function buildSummaryMessages(
  summaryText: string,
  tail: readonly BaseMessage[],
  options: Pick<SummarizationOptions, "summaryPrefix" | "acknowledgement"> = {},
) {
  const additional_kwargs = { lc_source: SUMMARY_SOURCE };
  const content = `${options.summaryPrefix ?? DEFAULT_SUMMARY_PREFIX}\n\n${summaryText.trim() || EMPTY_SUMMARY}`;
  const summary = new HumanMessage({ content, additional_kwargs });
  if (turnOf(tail[0]) !== "user") return [summary];
  return [summary, new AIMessage({ content: options.acknowledgement ?? DEFAULT_ACKNOWLEDGEMENT, additional_kwargs })];
}

// --- the transcript ---------------------------------------------------------------------------------------------

/**
 * Render a history as plain text for a summarizer prompt, keeping tool-call identity. core's
 * `getBufferString` prints a result as `Tool: <name>, <content>` with no call id: with two calls to the same
 * tool, which result answers which is lost. Here every call keeps its id, name and arguments,
 * the calls of one assistant message stay grouped as the model emitted them, and every result names the call
 * id (and tool) it answers.
 */

/** Content block types that carry a tool call (rendered as calls, not as text), or are not conversation text. */
const SILENT_BLOCK_TYPES = new Set(
  "tool_use tool_call server_tool_use input_json_delta tool_call_chunk thinking redacted_thinking reasoning".split(" "),
);

/**
 * Render `messages` as text, one entry per message:
 * ```
 * User: weather in Paris and Rome?
 * Assistant called 2 tools in parallel:
 *   - get_weather [id call_1] {"city":"Paris"}
 *   - get_weather [id call_2] {"city":"Rome"}
 * Tool result for call_2 (get_weather): 18C
 * Tool result for call_1 (get_weather), error: timeout
 * ```
 * Calls are read from every location an adapter sends (deduplicated by id). A call without an id is shown
 * as `[no id]`; a result without an id, or whose id matches no earlier call, says so.
 */
export const messagesToTranscript = boundary("messagesToTranscript", (messages: readonly BaseMessage[]) =>
  transcriptOf(readMessageList(messages, "messagesToTranscript")),
);

/** {@link messagesToTranscript} of messages already read. */
function transcriptOf(messages: readonly BaseMessage[]) {
  const callNames = new Map<unknown, string | undefined>();
  return messages.map((message) => renderMessage(message, callNames)).join("\n");
}

function renderMessage(message: BaseMessage, callNames: Map<unknown, string | undefined>) {
  const text = contentText(message.content);
  if (isAssistant(message)) {
    // In the order the model emitted them (`tool_calls` first), a call mirrored in several locations once.
    const calls = distinctCalls(message);
    const n = calls.length;
    const lines = text || !n ? [`Assistant: ${text}`] : [];
    if (n) lines.push(n === 1 ? "Assistant called 1 tool:" : `Assistant called ${n} tools in parallel:`);
    for (const { id, name, args } of calls) {
      if (id !== undefined) callNames.set(id, name);
      lines.push(`  - ${name ?? "(unnamed tool)"} [${id ? `id ${id}` : "no id"}] ${callArgsText(args)}`);
    }
    return lines.join("\n");
  }
  if (!isToolResult(message)) {
    const type = message.getType();
    const label =
      type === "generic"
        ? (nonEmptyString(fieldsOf(message).role) ?? "Message")
        : type === "human"
          ? "User"
          : type.charAt(0).toUpperCase() + type.slice(1);
    return `${label}: ${text}`;
  }
  const id = resultIdOf(message);
  const name = callNames.get(id) ?? nonEmptyString(message.name);
  const head = id === undefined ? "Tool result with no call id" : `Tool result for ${id}`;
  const unmatched = id === undefined || callNames.has(id) ? "" : ", no matching call";
  return `${head}${name ? ` (${name})` : ""}${unmatched}${message.status === "error" ? ", error" : ""}: ${text}`;
}

/** The conversation text of a message: text blocks joined; tool-call blocks omitted (rendered as calls). */
export const contentText = (content: unknown) =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.flatMap((block) => blockText(block) || []).join("\n")
      : "";

function blockText(block: unknown) {
  if (typeof block === "string") return block;
  if (!isDict(block)) return "";
  const { type, text } = block;
  // Untyped: a Bedrock block (`{ text }`, `{ toolUse }`).
  if (typeof type !== "string") return typeof text === "string" && !isDict(block.toolUse) ? text : "";
  if (SILENT_BLOCK_TYPES.has(type)) return "";
  if (typeof text === "string") return text;
  return type === "image" || type === "image_url" ? "[image]" : `[${type}]`;
}
