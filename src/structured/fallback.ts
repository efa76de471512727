/**
 * Native structured output that never fails a run for a limitation the package can route around. Before a
 * native request: a schema outside the subset (schema-subset.ts) goes to the next strategy. After one: a
 * refusal for the model or the schema (Bedrock's `ValidationException` texts below) falls back once to the next
 * strategy for that call, and is remembered for the lifetime of the setup (one wrapper or middleware object:
 * nothing global), so later calls go straight to that strategy: a refusal of the model for that model, a refusal
 * of the schema for that model and schema (a middleware object may serve agents with other schemas). Each fallback is reported once per
 * setup: `onFallback`, then the custom event `"structured_output_fallback"`.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { errorText } from "../errors";
import { safeJson } from "../values";
import { dispatchInRun } from "../integrations/events";
import type { ModelDescription } from "../models/detect";
import type { JsonSchema } from "./format";
import { subsetSchemaOf } from "./schema-subset";
import { strategyAfterNative, type StructuredOutputStrategy } from "./strategy";

/** Name of the custom event sent for each fallback (its payload is the {@link StructuredOutputFallback}). */
export const STRUCTURED_OUTPUT_FALLBACK_EVENT = "structured_output_fallback";

/** A native structured-output request that was not sent, or was refused, and the strategy used instead. */
export interface StructuredOutputFallback {
  /** The model, where known. */
  modelId?: string;
  from: "native";
  to: Exclude<StructuredOutputStrategy, "native">;
  /**
   * "schema": the schema is outside the subset constrained decoding takes (decided before sending, per call);
   * "refused": the provider refused the native request (remembered for this model, or this model and schema when
   * the schema was refused, for the setup's lifetime).
   */
  cause: "schema" | "refused";
  /** What the subset cannot express, or the provider's error text. */
  reason: string;
}

/**
 * The fixed parts of the refusals of a native request for the model or the schema (PROVIDER_RULES, "Structured
 * output"): `output_config.format: Extra inputs are not permitted` (a model without it), `For 'object' type,
 * 'additionalProperties' must be explicitly set to false`, `For 'integer' type, properties maximum, minimum are
 * not supported`, and their kin for other types, keywords and schemas; a schema over the compilation limits
 * (`Schemas contains too many parameters with union types ...`, `The compiled grammar is too large ...`,
 * `Schema is too complex ...`).
 */
const MODEL_REFUSALS: readonly RegExp[] = [
  /output_?config\b.*extra inputs are not permitted/i,
  /(?:doesn't|does not) support the outputConfig field/i,
];
const NATIVE_REFUSALS: readonly RegExp[] = [
  ...MODEL_REFUSALS,
  /for '[a-z| ']+' type, /i,
  /\bschemas? (?:are|is) not supported/i,
  /output_?config\.format\.schema\b/i,
  /\bschemas? contains? too many parameters/i,
  /\bcompiled grammar is too large/i,
  /\bschema is too complex/i,
];

/** The refusal text when `error` (or an error in its `cause` chain) is a native request refused for the model or the schema. */
export function nativeRefusalOf(error: unknown): string | undefined {
  for (let depth = 0; error != null && depth < 5; depth++) {
    const text = errorText(error);
    if (NATIVE_REFUSALS.some((pattern) => pattern.test(text))) return text;
    try {
      error = (error as Error).cause;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The memory of one setup (create it in the wrapper's factory, never at module level). It runs `run` with native
 * for this model and schema, or with the strategy native falls back to: at once for a schema outside the subset
 * or a refusal remembered, once more after a refusal now (then remembered for the model, or the model and schema).
 */
export function nativeFallbacks(onFallback?: (fallback: StructuredOutputFallback) => void) {
  const refused = new Map<string, StructuredOutputFallback["to"]>();
  const reported = new Set<string>();
  return async <T>(
    model: ModelDescription,
    jsonSchema: JsonSchema,
    run: (strategy: StructuredOutputStrategy) => Promise<T>,
    config?: RunnableConfig,
  ): Promise<T> => {
    const { modelId } = model;
    const modelKey = `${model.provider}\u0000${modelId}\u0000${model.thinking}`;
    const schemaKey = `${modelKey}\u0000${safeJson(jsonSchema)}`;
    const remembered = refused.get(modelKey) ?? refused.get(schemaKey);
    if (remembered !== undefined) return run(remembered);
    const fallBack = async (cause: StructuredOutputFallback["cause"], reason: string, key: string) => {
      const to = strategyAfterNative(model);
      const fallback: StructuredOutputFallback = { ...(modelId && { modelId }), from: "native", to, cause, reason };
      if (cause === "refused") refused.set(key, to);
      if (!reported.has(`${key}\u0000${cause}`)) {
        reported.add(`${key}\u0000${cause}`);
        try {
          onFallback?.(fallback);
        } catch {
          // a reporting callback must not fail the call it reports
        }
        await dispatchInRun(STRUCTURED_OUTPUT_FALLBACK_EVENT, fallback, config);
      }
      return run(to);
    };
    const subset = subsetSchemaOf(jsonSchema);
    if (!subset.ok) return fallBack("schema", subset.reason, `${modelKey}\u0000${subset.reason}`);
    try {
      return await run("native");
    } catch (error) {
      const reason = nativeRefusalOf(error);
      if (reason === undefined) throw error;
      // A model without native is refused whatever the schema: remembered for the model, else for the schema.
      return fallBack("refused", reason, MODEL_REFUSALS.some((p) => p.test(reason)) ? modelKey : schemaKey);
    }
  };
}
