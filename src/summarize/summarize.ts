/**
 * Summarization on the safe boundary: once a threshold is passed, the prefix found by
 * {@link findSafeSummarizationBoundary} is summarized by a chat model and the history becomes
 * `system + summary + tail`, so no tool call is ever split from its results. The graph surfaces (node, hook,
 * middleware) are thin adapters over {@link summarizeHistory}, in src/integrations.
 */
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  approximateTokenCounter,
  findSafeSummarizationBoundary,
  splitAtBoundary,
  type BoundaryOptions,
  type TokenCounter,
} from "./boundary";
import { contentText, messagesToTranscript } from "./transcript";

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
  return [
    new SystemMessage(DEFAULT_SUMMARY_INSTRUCTIONS),
    new HumanMessage(`Conversation to summarize:\n\n${transcript}`),
  ];
}

/** Whether a message was written by this module (or langchain's summarization middleware). */
export function isSummaryMessage(message: BaseMessage): boolean {
  return (message.additional_kwargs as Record<string, unknown> | undefined)?.lc_source === SUMMARY_SOURCE;
}

/** Whether the history has passed one of the thresholds. */
export function thresholdPassed(messages: BaseMessage[], trigger: SummarizationTrigger, counter: TokenCounter): boolean {
  if (trigger.messages !== undefined && messages.length > trigger.messages) return true;
  return trigger.tokens !== undefined && counter(messages) > trigger.tokens;
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
  options: Pick<SummarizationOptions, "summaryPrefix" | "acknowledgement"> = {},
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
 * threshold, nothing before the boundary, or nothing before it but an earlier summary.
 */
export async function summarizeHistory(
  messages: BaseMessage[],
  options: SummarizationOptions,
  config?: RunnableConfig,
): Promise<BaseMessage[] | undefined> {
  if (!thresholdPassed(messages, options.trigger, options.tokenCounter ?? approximateTokenCounter)) return undefined;
  const cut = findSafeSummarizationBoundary(messages, options.keep);
  const { system, summarized, kept } = splitAtBoundary(messages, cut);
  if (summarized.every(isSummaryMessage)) return undefined;
  const summaryText = await writeSummary(summarized, options, config);
  return [...system, ...buildSummaryMessages(summaryText, kept, options), ...kept];
}

async function writeSummary(
  summarized: BaseMessage[],
  options: SummarizationOptions,
  config: RunnableConfig | undefined,
): Promise<string> {
  const prompt = (options.prompt ?? defaultSummaryPrompt)(messagesToTranscript(summarized));
  // "nostream" keeps the summary out of `streamMode: "messages"`, where it would look like the agent's reply.
  const response = await options.model.invoke(prompt, {
    ...config,
    tags: [...(config?.tags ?? []), "nostream"],
    metadata: { ...config?.metadata, lc_source: SUMMARY_SOURCE },
  });
  return contentText(response.content);
}
