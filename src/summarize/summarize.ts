/**
 * Summarization on the safe boundary: once a threshold is passed, the prefix found by
 * {@link findSafeSummarizationBoundary} is summarized by a chat model and the history becomes
 * `system + summary + tail`, so no tool call is ever split from its results. The graph surfaces (node, hook,
 * middleware) are thin adapters over {@link summarizeHistory}, in src/integrations.
 */
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { ToolCallRepairInputError, boundary, callersOwn, describeInput } from "../errors";
import { isDict } from "../values";
import { approximateTokenCounter, boundaryOf, leadingSystemCount, type Budget, type TokenCounter } from "./boundary";
import {
  countOption,
  functionOption,
  optionsObject,
  ownOption,
  readMessageList,
  stringOption,
  syncCounter,
} from "./input";
import { contentText, transcriptOf } from "./transcript";

/** Anything with a chat model's `invoke`: a `BaseChatModel`, a bound model, a fake. */
export interface SummarizerModel {
  invoke(input: BaseMessage[], options?: RunnableConfig): Promise<{ content: unknown }>;
}

/** When to summarize: as soon as ONE given threshold is passed (more messages, or more tokens, than set). */
export interface SummarizationTrigger {
  messages?: number;
  tokens?: number;
}

/**
 * What to keep verbatim, the same on every summarization surface (langchain's `KeepSize`): exactly one of the
 * last `messages` messages, as many recent messages as fit in `tokens` (the leading system messages included),
 * or a `fraction` of the summarizer model's input limit (`model.profile.maxInputTokens`) in tokens. The
 * boundary keeps an exchange whole, so the kept part may be larger by the rest of one exchange.
 */
export type KeepSize = { messages: number } | { tokens: number } | { fraction: number };

/** What the surfaces keep when `keep` is not given (langchain's default). */
export const DEFAULT_KEEP: KeepSize = { messages: 20 };

export interface SummarizationOptions {
  /** The model that writes the summary. */
  model: SummarizerModel;
  trigger: SummarizationTrigger;
  /** What to keep verbatim. Keep it well below the trigger, or every turn summarizes. Default `{ messages: 20 }`. */
  keep?: KeepSize;
  /** Counts tokens for `trigger.tokens` and `keep.tokens`. Default: about 4 characters a token (`approximateTokenCounter`). */
  tokenCounter?: TokenCounter;
  /** Builds the summarizer's input from the transcript. Default: the package's summary prompt (`defaultSummaryPrompt`). */
  prompt?: (transcript: string) => BaseMessage[];
  /** First line of the summary message. */
  summaryPrefix?: string;
  /** Text of the assistant turn put after the summary when the kept tail opens with a user message. */
  acknowledgement?: string;
}

/** Marks the messages this module writes (same key and value as langchain's summarization middleware). */
export const SUMMARY_SOURCE = "summarization";
export const DEFAULT_SUMMARY_PREFIX = "Summary of the conversation so far:";
export const DEFAULT_ACKNOWLEDGEMENT = "Understood. I will continue from this summary.";
const EMPTY_SUMMARY = "(The summarizer returned no text; the earlier conversation is not available.)";

export const DEFAULT_SUMMARY_INSTRUCTIONS = [
  "You condense a conversation between a user, an assistant and its tools so it can continue without the original messages.",
  "Keep the user's goals, decisions, facts learned and open tasks. For each tool call, keep which tool was called with",
  "which arguments and what its result was (results name the call id they answer; two calls to the same tool are",
  "different calls). Do not invent results for calls that have none. Reply with the summary only.",
].join(" ");

export const defaultSummaryPrompt = boundary(
  "defaultSummaryPrompt",
  function defaultSummaryPrompt(transcript: string): BaseMessage[] {
    if (typeof transcript !== "string")
      throw new ToolCallRepairInputError(
        `defaultSummaryPrompt: transcript is ${describeInput(transcript)}; expected a string`,
        { argument: "transcript" },
      );
    return [
      new SystemMessage(DEFAULT_SUMMARY_INSTRUCTIONS),
      new HumanMessage(`Conversation to summarize:\n\n${transcript}`),
    ];
  },
);

/** Whether a message was written by this module (or langchain's summarization middleware). */
export const isSummaryMessage = boundary("isSummaryMessage", (message: BaseMessage): boolean => {
  const kwargs = isDict(message) ? message.additional_kwargs : undefined;
  return isDict(kwargs) && kwargs.lc_source === SUMMARY_SOURCE;
});

function passed(
  messages: BaseMessage[],
  trigger: SummarizationTrigger,
  count: (messages: BaseMessage[]) => number,
): boolean {
  if (trigger.messages !== undefined && messages.length > trigger.messages) return true;
  return trigger.tokens !== undefined && count(messages) > trigger.tokens;
}

function readTrigger(trigger: unknown, fn: string, path: string): SummarizationTrigger {
  const record = optionsObject(trigger, fn, "{ messages?: n >= 0, tokens?: n >= 0 } with at least one of them", path);
  const limits = {
    messages: countOption(record, "messages", `${path}.messages`),
    tokens: countOption(record, "tokens", `${path}.tokens`),
  };
  if (limits.messages === undefined && limits.tokens === undefined)
    throw new ToolCallRepairInputError(
      `${fn}: ${path} sets no threshold; expected { messages?: n >= 0, tokens?: n >= 0 } with at least one of them`,
      {
        argument: path,
      },
    );
  return limits;
}

/** How the summary is written: what {@link summarizeHistory} and the createAgent middleware share. */
export interface SummaryWriting {
  model: SummarizerModel;
  /** The summarizer's input for a transcript. */
  prompt: (transcript: string) => BaseMessage[];
  summaryPrefix?: string;
  acknowledgement?: string;
  /** The text the summarizer is shown for the summarized messages. Default: their whole transcript. */
  render?: (summarized: BaseMessage[]) => string | Promise<string>;
}

/** {@link SummarizationOptions}, validated. */
export interface Summarization extends SummaryWriting {
  trigger: SummarizationTrigger;
  budget: Budget;
  count: (messages: BaseMessage[]) => number;
}

/** Validates {@link SummarizationOptions}: a {@link ToolCallRepairInputError} naming the option otherwise. */
export function readSummarizationOptions(options: unknown, fn: string): Summarization {
  const record = optionsObject(
    options,
    fn,
    "{ model, trigger, keep?, tokenCounter?, prompt?, summaryPrefix?, acknowledgement? }",
  );
  const counter = functionOption<TokenCounter>(record, "tokenCounter");
  const count = counter ? syncCounter(counter, "options.tokenCounter") : approximateTokenCounter;
  return {
    model: readSummarizer(ownOption(record, "model"), fn, "options.model"),
    trigger: readTrigger(ownOption(record, "trigger"), fn, "options.trigger"),
    budget: budgetOf(readKeep(ownOption(record, "keep"), fn), count, ownOption(record, "model"), fn),
    count,
    prompt: callersOwn(functionOption<(transcript: string) => BaseMessage[]>(record, "prompt") ?? defaultSummaryPrompt),
    summaryPrefix: stringOption(record, "summaryPrefix"),
    acknowledgement: stringOption(record, "acknowledgement"),
  };
}

const KEEP_SHAPE = "exactly one of { messages: n >= 0 }, { tokens: n >= 0 }, { fraction: 0 <= f <= 1 }";

/** Validates `options.keep` ({@link KeepSize}; absent: {@link DEFAULT_KEEP}), naming the option and what is accepted. */
export function readKeep(value: unknown, fn: string): KeepSize {
  if (value === undefined) return DEFAULT_KEEP;
  const path = "options.keep";
  const record = optionsObject(value, fn, KEEP_SHAPE, path);
  for (const [old, now] of [
    ["keepLast", "messages"],
    ["maxTokens", "tokens"],
  ])
    if (ownOption(record, old) !== undefined)
      throw new ToolCallRepairInputError(
        `${fn}: ${path}.${old} is now ${path}.${now} (as in langchain); expected ${KEEP_SHAPE}`,
        {
          argument: `${path}.${old}`,
        },
      );
  const given = ["messages", "tokens", "fraction"].filter((key) => ownOption(record, key) !== undefined);
  if (given.length !== 1)
    throw new ToolCallRepairInputError(`${fn}: ${path} is ${describeInput(value)}; expected ${KEEP_SHAPE}`, {
      argument: path,
    });
  const key = given[0];
  const size = countOption(record, key, `${path}.${key}`)!;
  if (key === "fraction" && size > 1)
    throw new ToolCallRepairInputError(`${fn}: ${path}.fraction is ${size}; expected a fraction 0 <= f <= 1`, {
      argument: `${path}.fraction`,
    });
  if (key === "messages" && !Number.isInteger(size))
    throw new ToolCallRepairInputError(`${fn}: ${path}.messages is ${size}; expected a whole number`, {
      argument: `${path}.messages`,
    });
  return key === "messages" ? { messages: size } : key === "tokens" ? { tokens: size } : { fraction: size };
}

/**
 * The summarizer model's input limit: its profile's `maxInputTokens`. langchain falls back to core's
 * `getModelContextSize(name)`, which answers 4,097 for any name it does not know (every Bedrock and recent
 * Claude id): a fraction of that summarizes nearly every turn. Without a profile limit, a fraction is refused.
 */
export function inputLimitOf(model: unknown): number | undefined {
  const profile = isDict(model) ? model.profile : undefined;
  const limit = isDict(profile) ? profile.maxInputTokens : undefined;
  return typeof limit === "number" && limit > 0 ? limit : undefined;
}

/** {@link inputLimitOf}, required (a fraction is refused without it), naming the option at fault. */
export function inputLimit(model: unknown, fn: string): number {
  const limit = inputLimitOf(model);
  if (limit === undefined)
    throw new ToolCallRepairInputError(
      `${fn}: a fraction needs the summarizer model's input limit (model.profile.maxInputTokens), ` +
        "which this model does not give; use tokens",
      { argument: "options.model" },
    );
  return limit;
}

/** A {@link KeepSize} as the synchronous budget of the boundary (a fraction in tokens of the model's limit). */
function budgetOf(keep: KeepSize, count: TokenCounter, model: unknown, fn: string): Budget {
  if ("messages" in keep) return { keepLast: keep.messages };
  const tokens = "tokens" in keep ? keep.tokens : Math.floor(inputLimit(model, fn) * keep.fraction);
  return { maxTokens: tokens, count };
}

/** A model the summary can be asked of: anything with `invoke`. */
export function readSummarizer(model: unknown, fn: string, path: string): SummarizerModel {
  const invoke = typeof model === "object" && model !== null ? (model as { invoke?: unknown }).invoke : undefined;
  if (typeof invoke === "function") return model as SummarizerModel;
  throw new ToolCallRepairInputError(
    `${fn}: ${path} is ${describeInput(model)}; expected a chat model (anything with invoke(messages))`,
    { argument: path },
  );
}

/**
 * The messages that stand for the summarized prefix. The summary is a user message: Bedrock (B5) and Gemini
 * (G1) need the first non-system message to be a user turn, and an assistant message cannot carry context
 * that the model must treat as given. When the tail opens with a user message, a short assistant turn
 * follows the summary so roles still alternate (Bedrock B6, Gemini G1).
 */
export function buildSummaryMessages(
  summaryText: string,
  tail: readonly BaseMessage[],
  options: Pick<SummaryWriting, "summaryPrefix" | "acknowledgement"> = {},
): BaseMessage[] {
  const text = summaryText.trim() === "" ? EMPTY_SUMMARY : summaryText.trim();
  const marker = { lc_source: SUMMARY_SOURCE };
  const summary = new HumanMessage({
    content: `${options.summaryPrefix ?? DEFAULT_SUMMARY_PREFIX}\n\n${text}`,
    additional_kwargs: marker,
  });
  if (!opensWithUserTurn(tail)) return [summary];
  const ack = new AIMessage({ content: options.acknowledgement ?? DEFAULT_ACKNOWLEDGEMENT, additional_kwargs: marker });
  return [summary, ack];
}

function opensWithUserTurn(tail: readonly BaseMessage[]): boolean {
  const first = tail[0];
  if (first === undefined) return false;
  const type = first.getType();
  return type === "human" || (type === "generic" && (first as unknown as { role?: string }).role === "user");
}

/**
 * The summarized history (`system + summary + tail`), or undefined when there is nothing to do: under every
 * threshold, nothing before the boundary, or nothing before it but an earlier summary. Bad arguments get a
 * {@link ToolCallRepairInputError}; what the summarizer model or a token counter throws propagates unchanged.
 */
export const summarizeHistory = boundary(
  "summarizeHistory",
  async (
    messages: BaseMessage[],
    options: SummarizationOptions,
    config?: RunnableConfig,
  ): Promise<BaseMessage[] | undefined> => {
    const fn = "summarizeHistory";
    return summarizeRead(readMessageList(messages, fn), readSummarizationOptions(options, fn), config);
  },
);

/** {@link summarizeHistory} of messages already read, with options already validated. */
export async function summarizeRead(
  messages: BaseMessage[],
  options: Summarization,
  config?: RunnableConfig,
): Promise<BaseMessage[] | undefined> {
  const cut = passed(messages, options.trigger, options.count) ? boundaryOf(messages, options.budget) : undefined;
  return cut === undefined ? undefined : summarizeBefore(messages, cut, options, config);
}

/**
 * The history with `messages[systemCount..cut)` replaced by a summary (`cut` comes from the safe boundary), or
 * undefined when nothing but an earlier summary (or nothing at all) comes before the cut.
 */
export async function summarizeBefore(
  messages: BaseMessage[],
  cut: number,
  writing: SummaryWriting,
  config?: RunnableConfig,
): Promise<BaseMessage[] | undefined> {
  const systemCount = leadingSystemCount(messages);
  const at = Math.min(messages.length, Math.max(systemCount, cut));
  const summarized = messages.slice(systemCount, at);
  const kept = messages.slice(at);
  if (summarized.every(isSummaryMessage)) return undefined;
  const transcript = writing.render ? await callersOwn(writing.render)(summarized) : transcriptOf(summarized);
  const summaryText = await writeSummary(transcript, writing, config);
  return [...messages.slice(0, systemCount), ...buildSummaryMessages(summaryText, kept, writing), ...kept];
}

async function writeSummary(
  transcript: string,
  writing: SummaryWriting,
  config: RunnableConfig | undefined,
): Promise<string> {
  const prompt = writing.prompt(transcript);
  // "nostream" keeps the summary out of `streamMode: "messages"`, where it would look like the agent's reply.
  const response: unknown = await callersOwn(writing.model.invoke.bind(writing.model))(prompt, {
    ...config,
    tags: [...(config?.tags ?? []), "nostream"],
    metadata: { ...config?.metadata, lc_source: SUMMARY_SOURCE },
  });
  return contentText(typeof response === "string" ? response : isDict(response) ? response.content : undefined);
}
