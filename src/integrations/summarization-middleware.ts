/**
 * `summarizationMiddleware`: a drop-in for langchain's own `summarizationMiddleware` in `createAgent`, that cuts
 * only on the safe boundary (`findSafeSummarizationBoundary`): no tool call is ever split from its results, a
 * mixed result run keeps every caller, calls stored anywhere an adapter sends them are read, the leading system
 * messages are kept, and the summary is followed by an assistant turn when the kept part opens with a user turn.
 *
 * Like langchain's, it summarizes in `beforeModel` and persists `system + summary + tail` (as
 * `RemoveMessage(REMOVE_ALL_MESSAGES)` then the list). Persisting is what summarization is for: a summary made
 * only for the request (`wrapModelCall`) leaves the stored thread growing, so the trigger stays passed and
 * every model call pays for a new summary of an ever longer prefix, each one different. `beforeModel` runs
 * before every model call, after tool results too, which is safe here because the boundary keeps an exchange
 * whole; at that point the tools of the last exchange have run, so no resumable call is summarized away.
 * What it writes is structural (a shorter valid history), never a provider's shaping.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { HumanMessage } from "@langchain/core/messages";
import { pickRunnableConfigKeys, type RunnableConfig } from "@langchain/core/runnables";
import { createMiddleware, initChatModel } from "langchain";
import { ToolCallRepairInputError, boundary } from "../errors";
import {
  approximateTokenCounter,
  leadingSystemCount,
  safeCutFrom,
  smallestFittingCutAsync,
} from "../summarize/boundary";
import {
  asyncCounter,
  countOption,
  functionOption,
  optionsObject,
  ownOption,
  readMessageList,
  stringOption,
} from "../summarize/input";
import {
  defaultSummaryPrompt,
  inputLimit,
  inputLimitOf,
  isSummaryMessage,
  type KeepSize,
  readKeep,
  readSummarizer,
  summarizeBefore,
  type SummarizerModel,
  type SummaryWriting,
} from "../summarize/summarize";
import { transcriptOf } from "../summarize/transcript";
import type { Dict } from "../values";
import { orFallback, type RepairReporting } from "./events";
import { replaceAllMessages } from "./state-update";

/** Same name as langchain's middleware, so node names in traces and stream filters stay the same. */
export const SUMMARIZATION_MIDDLEWARE_NAME = "SummarizationMiddleware";

/** A size relative to the conversation: any of them (langchain's `ContextSize`). */
export interface ContextSize {
  /** Fraction (0 to 1] of the summarizer model's input limit (`model.profile.maxInputTokens`, required), in tokens. */
  fraction?: number;
  tokens?: number;
  messages?: number;
}

export type { KeepSize };

export interface SummarizationMiddlewareOptions extends Pick<RepairReporting, "onError"> {
  /** The model that writes the summary: a chat model, or a `"provider:model"` string for langchain's `initChatModel`. */
  model: string | SummarizerModel;
  /**
   * When to summarize, as in langchain: one condition fires when the history reaches every limit it sets
   * (`>=`, AND); a list fires when any of its conditions does (OR).
   */
  trigger: ContextSize | ContextSize[];
  /** What to keep verbatim, exactly one of `messages`, `tokens`, `fraction`. Default `{ messages: 20 }`. */
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
  /** Middleware name; createAgent requires names to be unique. Default `"SummarizationMiddleware"`. */
  name?: string;
}

const FN = "summarizationMiddleware";

/**
 * Summarizes the history before a model call once `trigger` fires, keeping `keep` verbatim on the safe
 * boundary, and persists `system + summary + tail`. Options are checked here (a {@link ToolCallRepairInputError}
 * naming the option); at run time nothing fails the user's run: when summarizing fails (the summarizer throws,
 * the state holds something that is not a message), the history goes on unchanged and the error is reported
 * (`onError`, custom event `"tool_call_repair_error"`).
 */
export const summarizationMiddleware = boundary(
  "summarizationMiddleware",
  function summarizationMiddleware(options: SummarizationMiddlewareOptions) {
    const settings = readMiddlewareOptions(options);
    const summarizer = lazyModel(settings.model);

    return createMiddleware({
      name: settings.name,
      beforeModel: async (state, runtime) => {
        const config = pickRunnableConfigKeys(runtime as Record<string, unknown>) as RunnableConfig | undefined;
        return orFallback(
          async () => {
            const messages = readMessageList((state as { messages?: unknown }).messages ?? [], FN);
            const next = await summarized(messages, settings, await summarizer(), config);
            return next === undefined ? undefined : { messages: replaceAllMessages(next) };
          },
          undefined,
          { onError: settings.onError },
          config,
        );
      },
    });
  },
);

interface Settings {
  model: string | SummarizerModel;
  trigger: ContextSize[];
  keep: KeepSize;
  count: (messages: BaseMessage[]) => Promise<number>;
  summaryPrompt?: string;
  summaryPrefix?: string;
  trimTokensToSummarize?: number;
  acknowledgement?: string;
  name: string;
  onError?: (error: unknown) => void;
}

/**
 * The history with its prefix summarized, or undefined when the trigger has not fired or nothing is to
 * summarize.
 */
async function summarized(
  messages: BaseMessage[],
  settings: Settings,
  model: SummarizerModel,
  config: RunnableConfig | undefined,
) {
  const cut = (await fires(messages, settings, model))
    ? safeCutFrom(messages, await keepCut(messages, settings, model))
    : undefined;
  return cut === undefined ? undefined : summarizeBefore(messages, cut, writingFor(settings, model), config);
}

async function fires(messages: BaseMessage[], settings: Settings, model: SummarizerModel): Promise<boolean> {
  let total: number | undefined;
  const tokens = async () => (total ??= await settings.count(messages));
  for (const condition of settings.trigger) {
    if (condition.messages !== undefined && messages.length < condition.messages) continue;
    if (condition.tokens !== undefined && (await tokens()) < condition.tokens) continue;
    if (condition.fraction !== undefined && (await tokens()) < Math.floor(inputLimit(model, FN) * condition.fraction))
      continue;
    return true;
  }
  return false;
}

/** The cut the budget asks for, before the pairing fix (`safeCutFrom`). */
async function keepCut(messages: BaseMessage[], settings: Settings, model: SummarizerModel): Promise<number> {
  const n = messages.length;
  const keep = settings.keep;
  if ("messages" in keep) return n - keep.messages;
  const limit = "tokens" in keep ? keep.tokens : Math.floor(inputLimit(model, FN) * keep.fraction);
  const target = Math.max(1, Math.floor(limit));
  const systemCount = leadingSystemCount(messages);
  const system = messages.slice(0, systemCount);
  const cut = await smallestFittingCutAsync(
    systemCount,
    n,
    async (c) => (await settings.count([...system, ...messages.slice(c)])) <= target,
  );
  // As langchain does: the last message is always kept, even when it alone is over the budget.
  return n > systemCount ? Math.min(cut, n - 1) : cut;
}

function writingFor(settings: Settings, model: SummarizerModel): SummaryWriting {
  const template = settings.summaryPrompt;
  return {
    model,
    // A function replacement: the transcript may hold `$&` and other patterns a string replacement expands.
    prompt:
      template === undefined
        ? defaultSummaryPrompt
        : (transcript) => [new HumanMessage(template.replace("{messages}", () => transcript))],
    summaryPrefix: settings.summaryPrefix,
    acknowledgement: settings.acknowledgement,
    render:
      settings.trimTokensToSummarize === undefined
        ? undefined
        : (part) => boundedTranscript(part, settings.trimTokensToSummarize!, settings.count),
  };
}

/**
 * The transcript of `part` within `maxTokens`: earlier summaries (at its start) always, then the newest messages
 * that fit, cut on the safe boundary so that no result is shown without its call.
 */
async function boundedTranscript(
  part: BaseMessage[],
  maxTokens: number,
  count: (m: BaseMessage[]) => Promise<number>,
): Promise<string> {
  let summaries = 0;
  while (summaries < part.length && isSummaryMessage(part[summaries])) summaries++;
  const earlier = part.slice(0, summaries);
  const rest = part.slice(summaries);
  const budgetCut = await smallestFittingCutAsync(
    0,
    rest.length,
    async (c) => (await count([...earlier, ...rest.slice(c)])) <= maxTokens,
  );
  const cut = safeCutFrom(rest, budgetCut);
  if (cut === 0) return transcriptOf(part);
  const omitted = `(${cut} earlier message${cut === 1 ? "" : "s"} omitted)`;
  return [transcriptOf(earlier), omitted, transcriptOf(rest.slice(cut))].filter((text) => text !== "").join("\n");
}

/** The model, built once on first use from a `"provider:model"` string; a failed build is retried next time. */
function lazyModel(model: string | SummarizerModel): () => Promise<SummarizerModel> {
  if (typeof model !== "string") return async () => model;
  let built: Promise<SummarizerModel> | undefined;
  return () => {
    built ??= (initChatModel(model) as Promise<unknown> as Promise<SummarizerModel>).catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };
}

// --- options ------------------------------------------------------------------------------------------------

const TRIGGER_SHAPE =
  "{ messages?: n > 0, tokens?: n > 0, fraction?: 0 < f <= 1 } with at least one, or a list of them";

function readMiddlewareOptions(options: unknown): Settings {
  const record = optionsObject(
    options,
    FN,
    "{ model, trigger, keep?, tokenCounter?, summaryPrompt?, summaryPrefix?, trimTokensToSummarize? }",
  );
  for (const [old, now] of [
    ["maxTokensBeforeSummary", "trigger: { tokens }"],
    ["messagesToKeep", "keep: { messages }"],
  ])
    if (ownOption(record, old) !== undefined)
      throw new ToolCallRepairInputError(
        `${FN}: options.${old} is deprecated in langchain and not supported here; use ${now}`,
        { argument: `options.${old}` },
      );
  const modelOption = ownOption(record, "model");
  const model =
    typeof modelOption === "string" && modelOption !== ""
      ? modelOption
      : readSummarizer(modelOption, FN, "options.model");
  const trigger = readTriggers(ownOption(record, "trigger"));
  const keep = readKeep(ownOption(record, "keep"), FN);
  const counter = functionOption<(m: BaseMessage[]) => unknown>(record, "tokenCounter");
  const summaryPrompt = stringOption(record, "summaryPrompt");
  if (summaryPrompt !== undefined && !summaryPrompt.includes("{messages}"))
    throw new ToolCallRepairInputError(
      `${FN}: options.summaryPrompt has no {messages} placeholder; the summarizer would never see the conversation`,
      {
        argument: "options.summaryPrompt",
      },
    );
  const trimTokens = countOption(record, "trimTokensToSummarize");
  if (trimTokens === 0)
    throw new ToolCallRepairInputError(`${FN}: options.trimTokensToSummarize is 0; expected a number > 0`, {
      argument: "options.trimTokensToSummarize",
    });
  const usesFraction = trigger.some((c) => c.fraction !== undefined) || "fraction" in keep;
  if (usesFraction && typeof model !== "string" && inputLimitOf(model) === undefined)
    throw new ToolCallRepairInputError(
      `${FN}: a fraction needs the model's input limit (model.profile.maxInputTokens), which this model does not give; use tokens`,
      {
        argument: "options.model",
      },
    );
  return {
    model,
    trigger,
    keep,
    count: asyncCounter(counter ?? approximateTokenCounter, "options.tokenCounter"),
    summaryPrompt,
    summaryPrefix: stringOption(record, "summaryPrefix"),
    trimTokensToSummarize: trimTokens,
    acknowledgement: stringOption(record, "acknowledgement"),
    name: stringOption(record, "name") ?? SUMMARIZATION_MIDDLEWARE_NAME,
    onError: functionOption(record, "onError"),
  };
}

function readTriggers(value: unknown): ContextSize[] {
  if (value === undefined)
    throw new ToolCallRepairInputError(
      `${FN}: options.trigger is required (without it langchain's middleware never summarizes); expected ${TRIGGER_SHAPE}`,
      {
        argument: "options.trigger",
      },
    );
  const list: unknown[] = Array.isArray(value) ? [...value] : [value];
  if (list.length === 0)
    throw new ToolCallRepairInputError(`${FN}: options.trigger is an empty list; expected ${TRIGGER_SHAPE}`, {
      argument: "options.trigger",
    });
  return list.map((condition, i) =>
    readTrigger(condition, Array.isArray(value) ? `options.trigger[${i}]` : "options.trigger"),
  );
}

function readTrigger(value: unknown, path: string): ContextSize {
  const record = optionsObject(value, FN, TRIGGER_SHAPE, path);
  const condition: ContextSize = {
    messages: positive(record, "messages", path, true),
    tokens: positive(record, "tokens", path, false),
    fraction: positive(record, "fraction", path, false),
  };
  if (condition.fraction !== undefined && condition.fraction > 1)
    throw new ToolCallRepairInputError(
      `${FN}: ${path}.fraction is ${condition.fraction}; expected a fraction 0 < f <= 1`,
      {
        argument: `${path}.fraction`,
      },
    );
  if (condition.messages === undefined && condition.tokens === undefined && condition.fraction === undefined)
    throw new ToolCallRepairInputError(`${FN}: ${path} sets no limit; expected ${TRIGGER_SHAPE}`, { argument: path });
  return condition;
}

/** A number > 0 (a whole one with `integer`), or undefined when absent. */
function positive(record: Dict, key: string, path: string, integer: boolean): number | undefined {
  const value = countOption(record, key, `${path}.${key}`);
  if (value === undefined) return undefined;
  if (value === 0 || (integer && !Number.isInteger(value)))
    throw new ToolCallRepairInputError(
      `${FN}: ${path}.${key} is ${value}; expected a ${integer ? "whole " : ""}number > 0`,
      { argument: `${path}.${key}` },
    );
  return value;
}
