/**
 * The one retry every surface makes after a rejection: decide whether an error is a history rejection worth
 * a retry (`recoveryStep`), and, when the retry fails too, hand back the ORIGINAL error with the diagnosis
 * attached (`recoveryFailed`). A surface retries at most once per model call: an error that already carries a
 * diagnosis is never retried again, so nested surfaces cannot loop.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { Provider, ProviderRejection, RepairOptions, ToolCallRepair } from "../types";
import { forceRepairToolCalls, repairProviderFor } from "./force-repair";
import { parseToolPairingError } from "./parse-error";

/** Property of the original error that holds the diagnosis after a recovery gave up. */
export const REJECTION_DIAGNOSIS_KEY = "toolCallRejection";

/** What a surface knew when it gave up: attached to the original error it rethrows. */
export interface RejectionDiagnosis {
  /** The rejection, as parsed from the original error. */
  rejection: ProviderRejection;
  /** What the force repair changed for the retry (empty: nothing to change, so no retry was made). */
  repairs: ToolCallRepair[];
  /** Whether the repaired request was sent. */
  retried: boolean;
  /** The retry's own error, when it failed. */
  retryError?: unknown;
  /** The retry's error, parsed, when it was a history rejection too. */
  retryRejection?: ProviderRejection;
}

/** The diagnosis a surface attached to an error it rethrew after a failed recovery, if any. */
export function rejectionDiagnosisOf(error: unknown): RejectionDiagnosis | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  let value: unknown;
  try {
    value = (error as Record<string, unknown>)[REJECTION_DIAGNOSIS_KEY];
  } catch {
    return undefined; // as parseToolPairingError: an error object that cannot be read carries no diagnosis
  }
  return typeof value === "object" && value !== null ? (value as RejectionDiagnosis) : undefined;
}

export type RecoveryStep =
  /** Not a history rejection, already diagnosed, or nothing to repair: throw `error` (diagnosis attached when parsed). */
  | { action: "rethrow"; error: unknown }
  /** Send `messages` once more. */
  | { action: "retry"; rejection: ProviderRejection; messages: BaseMessage[]; repairs: ToolCallRepair[] };

export interface RecoveryStepOptions extends RepairOptions {
  /**
   * The messages exactly as the model received them, when `messages` lacks some (a system prompt the
   * surface prepends), and where `messages` starts in them. Used to map the provider's position back.
   */
  sent?: { messages: readonly unknown[]; offset: number };
}

/**
 * The engine profile a forced repair satisfies: `"strict"` stays strict (valid everywhere); a named provider
 * yields to the one that actually rejected the request, when the error says who that was.
 */
export function recoveryProvider(configured: Provider | undefined, rejection: ProviderRejection): Provider {
  const provider = configured ?? "strict";
  if (provider === "strict") return provider;
  const rejecting = repairProviderFor(rejection.provider);
  return rejecting === "strict" ? provider : rejecting;
}

/** Whether (and with what) to retry after `error` for a request of `messages`. Never throws. */
export function recoveryStep(error: unknown, messages: BaseMessage[], options: RecoveryStepOptions = {}): RecoveryStep {
  if (rejectionDiagnosisOf(error)) return { action: "rethrow", error };
  const { sent, onRepair: _reportedBySurface, ...repairOptions } = options;
  const parsed = parseToolPairingError(error, { messages: sent?.messages ?? messages, provider: options.provider });
  if (!parsed) return { action: "rethrow", error };
  const rejection = withOwnIndex(parsed, sent?.offset ?? 0, messages.length);
  let repaired: { messages: BaseMessage[]; repairs: ToolCallRepair[] };
  try {
    repaired = forceRepairToolCalls(messages, rejection, {
      ...repairOptions,
      provider: recoveryProvider(options.provider, rejection),
    });
  } catch {
    return { action: "rethrow", error };
  }
  if (repaired.repairs.length === 0)
    return { action: "rethrow", error: attach(error, { rejection, repairs: [], retried: false }) };
  return { action: "retry", rejection, messages: repaired.messages, repairs: repaired.repairs };
}

/** The original error, with the diagnosis of the failed retry attached (`toolCallRejection`, and `cause` when free). */
export function recoveryFailed(
  original: unknown,
  step: Extract<RecoveryStep, { action: "retry" }>,
  retryError: unknown,
): unknown {
  const retryRejection = parseToolPairingError(retryError);
  return attach(original, {
    rejection: step.rejection,
    repairs: step.repairs,
    retried: true,
    retryError,
    ...(retryRejection ? { retryRejection } : {}),
  });
}

/** `messageIndex` counted in the caller's messages rather than in what was sent (a prepended system prompt). */
function withOwnIndex(rejection: ProviderRejection, offset: number, length: number): ProviderRejection {
  if (rejection.messageIndex === undefined || offset === 0) return rejection;
  const own = rejection.messageIndex - offset;
  const { messageIndex: _sentIndex, ...rest } = rejection;
  return own >= 0 && own < length ? { ...rest, messageIndex: own } : rest;
}

function attach(error: unknown, diagnosis: RejectionDiagnosis): unknown {
  if (typeof error !== "object" || error === null) return error;
  const hidden = { value: diagnosis, enumerable: false, configurable: true, writable: true };
  try {
    Object.defineProperty(error, REJECTION_DIAGNOSIS_KEY, hidden);
    if ((error as { cause?: unknown }).cause === undefined) Object.defineProperty(error, "cause", hidden);
  } catch {
    // A frozen error is rethrown as it is.
  }
  return error;
}
