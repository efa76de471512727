/**
 * Summarization on the safe boundary: once a threshold is passed, the prefix found by
 * {@link findSafeSummarizationBoundary} is summarized by a chat model and the history becomes
 * `system + summary + tail`, so no tool call is ever split from its results. The graph surfaces (node, hook,
 * middleware) are thin adapters over {@link summarizeHistory}, in src/integrations.
 */
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { ToolCallRepairInputError, describeInput } from "../errors";
import { isDict } from "../values";
import {
  approximateTokenCounter,
  boundaryOf,
  leadingSystemCount,
  readBoundaryOptions,
  type Budget,
  type BoundaryOptions,
  type TokenCounter,
} from "./boundary";
import {
  countOption,
  functionOption,
  guarded,
  optionsObject,
  ownOption,
  readingOption,
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

export interface SummarizationOptions {
  /** The model that writes the summary. */
  model: SummarizerModel;
  trigger: SummarizationTrigger;
  /** How much recent history to keep verbatim. Keep it well below the trigger, or every turn summarizes. */
  keep: BoundaryOptions;
  /** Counts tokens for `trigger.tokens`. Default {@link approximateTokenCounter}. */
  tokenCounter?: TokenCounter;
  /** Builds the summarizer's input from the transcript. Default {@link defaultSummaryPrompt}. */
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

export function defaultSummaryPrompt(transcript: string): BaseMessage[] {
  if (typeof transcript !== "string")
    throw new ToolCallRepairInputError(
      `defaultSummaryPrompt: transcript is ${describeInput(transcript)}; expected a string`,
      { argument: "transcript" },
    );
  return [
    new SystemMessage(DEFAULT_SUMMARY_INSTRUCTIONS),
    new HumanMessage(`Conversation to summarize:\n\n${transcript}`),
  ];
}

/** Whether a message was written by this module (or langchain's summarization middleware). */
export function isSummaryMessage(message: BaseMessage): boolean {
  try {
    const kwargs = isDict(message) ? message.additional_kwargs : undefined;
    return isDict(kwargs) && kwargs.lc_source === SUMMARY_SOURCE;
  } catch {
    return false; // a message that cannot be read is not one of ours
  }
}

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
    "{ model, trigger, keep, tokenCounter?, prompt?, summaryPrefix?, acknowledgement? }",
  );
  const counter = functionOption<TokenCounter>(record, "tokenCounter");
  return {
    model: readSummarizer(ownOption(record, "model"), fn, "options.model"),
    trigger: readTrigger(ownOption(record, "trigger"), fn, "options.trigger"),
    budget: readBoundaryOptions(ownOption(record, "keep"), fn, "options.keep"),
    count: counter ? syncCounter(counter, "options.tokenCounter") : approximateTokenCounter,
    prompt: functionOption<(transcript: string) => BaseMessage[]>(record, "prompt") ?? defaultSummaryPrompt,
    summaryPrefix: stringOption(record, "summaryPrefix"),
    acknowledgement: stringOption(record, "acknowledgement"),
  };
}

/** A model the summary can be asked of: anything with `invoke`. */
export function readSummarizer(model: unknown, fn: string, path: string): SummarizerModel {
  const invoke = readingOption(path, () =>
    typeof model === "object" && model !== null ? (model as { invoke?: unknown }).invoke : undefined,
  );
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
export async function summarizeHistory(
  messages: BaseMessage[],
  options: SummarizationOptions,
  config?: RunnableConfig,
): Promise<BaseMessage[] | undefined> {
  const fn = "summarizeHistory";
  return summarizeRead(readMessageList(messages, fn), readSummarizationOptions(options, fn), config);
}

/** {@link summarizeHistory} of messages already read, with options already validated. */
export async function summarizeRead(
  messages: BaseMessage[],
  options: Summarization,
  config?: RunnableConfig,
): Promise<BaseMessage[] | undefined> {
  const fn = "summarizeHistory";
  const cut = guarded(fn, messages, () =>
    passed(messages, options.trigger, options.count) ? boundaryOf(messages, options.budget) : undefined,
  );
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
  const transcript = writing.render
    ? await writing.render(summarized)
    : guarded("summarizeHistory", summarized, () => transcriptOf(summarized));
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
  const response: unknown = await writing.model.invoke(prompt, {
    ...config,
    tags: [...(config?.tags ?? []), "nostream"],
    metadata: { ...config?.metadata, lc_source: SUMMARY_SOURCE },
  });
  return contentText(typeof response === "string" ? response : isDict(response) ? response.content : undefined);
}
