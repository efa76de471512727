/**
 * Options, validated and resolved once: every value checked against its own table (never against an object
 * whose prototype could answer for it), a clear error naming the option and the accepted values otherwise.
 */
import { defaultSyntheticText } from "../messages/build";
import { option, readOptions } from "../options";
import { PROVIDERS, REPAIR_LEVELS, type FindOptions, type RepairOptions } from "../types";

/**
 * Writes the text of a synthetic tool result: the call it answers (`id`, `name`), the problem that made it
 * (`reason`), what is known of its run (`toolRun`) and, for a forced repair, the provider's rejection (`note`).
 * The `syntheticResultText` option.
 */
export type SyntheticText = NonNullable<RepairOptions["syntheticResultText"]>;

/** Repair options as resolved: every one set (its default where not given), `onRepair` undefined where not given. */
export type ResolvedOptions = Required<Omit<RepairOptions, "onRepair">> & { onRepair: RepairOptions["onRepair"] };

/** The engine's options, declared with the shared option kinds (`src/options.ts`). */
export const OPTIONS = {
  provider: option.oneOf(PROVIDERS),
  level: option.oneOf(REPAIR_LEVELS),
  orphanCalls: option.oneOf(["answer", "remove"]),
  trailing: option.oneOf(["keep", "answer", "remove"]),
  orphanResults: option.oneOf(["convert", "drop"]),
  invalidCalls: option.oneOf(["answer", "remove"]),
  systemMessages: option.oneOf(["placed", "user-text"]),
  toolsInRequest: option.flag,
  readOnlyTools: option.names,
  syntheticResultText: option.fn,
  onRepair: option.fn,
};

/** Every option's default. */
const DEFAULTS: ResolvedOptions = {
  provider: "strict",
  level: "request",
  orphanCalls: "answer",
  trailing: "answer",
  orphanResults: "convert",
  invalidCalls: "answer",
  systemMessages: "placed",
  // Unknown means tools are there: converting a history for a request that does carry tools would lose nothing
  // the provider needs, but would change what the model sees for no reason.
  toolsInRequest: true,
  readOnlyTools: [],
  syntheticResultText: defaultSyntheticText,
  onRepair: undefined,
};

/**
 * Validates and resolves repair options, or find options (`find`) in repair-option terms: `trailing: "keep"` and
 * `trailingIsProblem: false` mean the same. `fn` names the caller in errors.
 */
export function resolveOptions(input: unknown, fn: string, find = false): ResolvedOptions {
  const {
    trailingIsProblem,
    syntheticResultText: text,
    ...given
  } = readOptions<RepairOptions & FindOptions>(
    input,
    fn,
    find ? { ...OPTIONS, trailingIsProblem: option.flag } : OPTIONS,
  );
  const own = text ? guardedText(text) : defaultSyntheticText;
  return {
    ...DEFAULTS,
    ...given,
    ...(trailingIsProblem === false && { trailing: "keep" }),
    // Told whether the call's tool is one of `readOnlyTools`.
    syntheticResultText: (call) => own({ ...call, readOnly: given.readOnlyTools?.includes(call.name!) }),
  };
}

/** A user's text function that throws or returns something other than a non-empty string falls back to `fallback`. */
export function guardedText(text: SyntheticText, fallback = defaultSyntheticText): SyntheticText {
  return (call) => {
    try {
      const out = text(call);
      if (typeof out === "string" && out.trim() !== "") return out;
    } catch {
      // The synthetic result must exist whatever the user's function does.
    }
    return fallback(call);
  };
}
