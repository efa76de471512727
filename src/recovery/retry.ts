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
import { isDict } from "../values";

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
  try {
    const value = isDict(error) ? error[REJECTION_DIAGNOSIS_KEY] : undefined;
    return isDict(value) ? (value as unknown as RejectionDiagnosis) : undefined;
  } catch {
    return undefined; // as parseToolPairingError: an error object that cannot be read carries no diagnosis
  }
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
  const rejecting = repairProviderFor(rejection.provider);
  return !configured || configured === "strict" ? "strict" : rejecting === "strict" ? configured : rejecting;
}

/** Whether (and with what) to retry after `error` for a request of `messages`. Never throws. */
export function recoveryStep(error: unknown, messages: BaseMessage[], options: RecoveryStepOptions = {}): RecoveryStep {
  if (rejectionDiagnosisOf(error)) return { action: "rethrow", error };
  const { sent, onRepair: _reportedBySurface, ...repairOptions } = options;
  const parsed = parseToolPairingError(error, { messages: sent?.messages ?? messages, provider: options.provider });
  if (!parsed) return { action: "rethrow", error };
  // `messageIndex` counted in the caller's messages rather than in what was sent (a prepended system prompt).
  const { messageIndex, ...rest } = parsed;
  const own = (messageIndex ?? -1) - (sent?.offset ?? 0);
  const rejection: ProviderRejection = own >= 0 && own < messages.length ? { ...rest, messageIndex: own } : rest;
  try {
    const { messages: repaired, repairs } = forceRepairToolCalls(messages, rejection, {
      ...repairOptions,
      provider: recoveryProvider(options.provider, rejection),
    });
    if (repairs.length > 0) return { action: "retry", rejection, messages: repaired, repairs };
    return { action: "rethrow", error: attach(error, { rejection, repairs, retried: false }) };
  } catch {
    return { action: "rethrow", error };
  }
}

/** The original error, with the diagnosis of the failed retry attached (`toolCallRejection`, and `cause` when free). */
export function recoveryFailed(
  original: unknown,
  step: Extract<RecoveryStep, { action: "retry" }>,
  retryError: unknown,
): unknown {
  const { rejection, repairs } = step;
  const retryRejection = parseToolPairingError(retryError);
  return attach(original, { rejection, repairs, retried: true, retryError, ...(retryRejection && { retryRejection }) });
}

function attach(error: unknown, diagnosis: RejectionDiagnosis): unknown {
  if (!isDict(error)) return error;
  const hidden = { value: diagnosis, enumerable: false, configurable: true, writable: true };
  try {
    Object.defineProperty(error, REJECTION_DIAGNOSIS_KEY, hidden);
    if (error.cause === undefined) Object.defineProperty(error, "cause", hidden);
  } catch {
    // A frozen error is rethrown as it is.
  }
  return error;
}
