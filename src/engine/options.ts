/**
 * Options, validated and resolved once: every value checked against its own table (never against an object
 * whose prototype could answer for it), a clear error naming the option and the accepted values otherwise.
 */
import { ToolCallRepairInputError, optionsInput } from "../errors";
import { defaultSyntheticText } from "../messages/build";
import { quoteValue } from "../values";
import {
  PROVIDERS,
  REPAIR_LEVELS,
  type FindOptions,
  type InvalidCallStrategy,
  type OrphanCallStrategy,
  type OrphanResultStrategy,
  type Provider,
  type RepairLevel,
  type RepairOptions,
  type SystemMessageStrategy,
  type ToolCallProblemKind,
  type ToolCallRepair,
  type ToolRunState,
  type TrailingStrategy,
} from "../types";

/**
 * Writes the text of a synthetic tool result: the call it answers (`id`, `name`), the problem that made it
 * (`reason`), what is known of its run (`toolRun`) and, for a forced repair, the provider's rejection (`note`).
 * The `syntheticResultText` option.
 */
export type SyntheticText = (call: {
  id: string;
  name?: string;
  reason: ToolCallProblemKind;
  note?: string;
  toolRun: ToolRunState;
}) => string;

export interface ResolvedOptions {
  provider: Provider;
  level: RepairLevel;
  orphanCalls: OrphanCallStrategy;
  trailing: TrailingStrategy;
  orphanResults: OrphanResultStrategy;
  invalidCalls: InvalidCallStrategy;
  systemMessages: SystemMessageStrategy;
  /** Whether the request carries tools (false: tool blocks become text where the provider needs tools for them). */
  toolsInRequest: boolean;
  syntheticResultText: SyntheticText;
  onRepair: ((repair: ToolCallRepair) => void) | undefined;
}

const CHOICES = {
  provider: PROVIDERS,
  level: REPAIR_LEVELS,
  orphanCalls: ["answer", "remove"],
  trailing: ["keep", "answer", "remove"],
  orphanResults: ["convert", "drop"],
  invalidCalls: ["answer", "remove"],
  systemMessages: ["placed", "user-text"],
} as const;

type Choice = keyof typeof CHOICES;

/** An own option (an inherited one never answers). */
const own = (options: Record<string, unknown>, key: string): unknown =>
  Object.hasOwn(options, key) ? options[key] : undefined;

function choice<K extends Choice>(
  options: Record<string, unknown>,
  key: K,
  fallback: (typeof CHOICES)[K][number],
): (typeof CHOICES)[K][number] {
  const value = own(options, key);
  if (value === undefined) return fallback;
  const allowed = CHOICES[key] as readonly unknown[];
  if (typeof value !== "string" || !allowed.includes(value))
    throw new ToolCallRepairInputError(
      `options.${key} is ${quoteValue(value)}; expected one of ${allowed.join(", ")}`,
      { argument: `options.${key}` },
    );
  return value as (typeof CHOICES)[K][number];
}

function callback<T>(options: Record<string, unknown>, key: string): T | undefined {
  const value = own(options, key);
  if (value === undefined) return undefined;
  if (typeof value !== "function")
    throw new ToolCallRepairInputError(`options.${key} is ${quoteValue(value)}; expected a function`, {
      argument: `options.${key}`,
    });
  return value as T;
}

function flag(options: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = own(options, key);
  if (value === undefined) return fallback;
  if (typeof value !== "boolean")
    throw new ToolCallRepairInputError(`options.${key} is ${quoteValue(value)}; expected a boolean`, {
      argument: `options.${key}`,
    });
  return value;
}

/** Validates and resolves repair options. `fn` names the caller in errors. */
export function resolveOptions(input: RepairOptions | undefined, fn = "repairToolCalls"): ResolvedOptions {
  return resolveRecord(optionsInput(input, fn));
}

function resolveRecord(options: Record<string, unknown>): ResolvedOptions {
  const text = callback<SyntheticText>(options, "syntheticResultText");
  return {
    provider: choice(options, "provider", "strict"),
    level: choice(options, "level", "request"),
    orphanCalls: choice(options, "orphanCalls", "answer"),
    trailing: choice(options, "trailing", "answer"),
    orphanResults: choice(options, "orphanResults", "convert"),
    invalidCalls: choice(options, "invalidCalls", "answer"),
    systemMessages: choice(options, "systemMessages", "placed"),
    // Unknown means tools are there: converting a history for a request that does carry tools would lose nothing
    // the provider needs, but would change what the model sees for no reason.
    toolsInRequest: flag(options, "toolsInRequest", true),
    syntheticResultText: text ? guardedText(text) : defaultSyntheticText,
    onRepair: callback(options, "onRepair"),
  };
}

/** Find options in repair-option terms: `trailing: "keep"` and `trailingIsProblem: false` mean the same. */
export function resolveFindOptions(input: FindOptions | undefined, fn = "findToolCallProblems"): ResolvedOptions {
  const options = optionsInput(input, fn);
  const trailingIsProblem = flag(options, "trailingIsProblem", true);
  const resolved = resolveRecord(options);
  return trailingIsProblem === false ? { ...resolved, trailing: "keep" as const } : resolved;
}

/** A user's text function that throws or returns something other than a non-empty string falls back to ours. */
function guardedText(text: SyntheticText): SyntheticText {
  return (call) => {
    try {
      const out = text(call);
      if (typeof out === "string" && out.trim() !== "") return out;
    } catch {
      // The synthetic result must exist whatever the user's function does.
    }
    return defaultSyntheticText(call);
  };
}
