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
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    const text = errorText(current);
    if (NATIVE_REFUSALS.some((pattern) => pattern.test(text))) return text;
    try {
      current = (current as { cause?: unknown }).cause;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface NativeFallbacks {
  /** The strategy to use in place of native for this model and schema, or undefined: send native. */
  instead(
    model: ModelDescription,
    jsonSchema: JsonSchema,
    config?: RunnableConfig,
  ): Promise<StructuredOutputFallback["to"] | undefined>;
  /**
   * After a native request failed: the strategy to retry with (now remembered for the model, or the model and
   * schema), or undefined when it was no refusal.
   */
  afterRefusal(
    model: ModelDescription,
    jsonSchema: JsonSchema,
    error: unknown,
    config?: RunnableConfig,
  ): Promise<StructuredOutputFallback["to"] | undefined>;
}

/** The memory of one setup (create it in the wrapper's factory, never at module level). */
export function nativeFallbacks(
  onFallback: ((fallback: StructuredOutputFallback) => void) | undefined,
): NativeFallbacks {
  const refused = new Map<string, StructuredOutputFallback>();
  const reported = new Set<string>();
  const report = async (fallback: StructuredOutputFallback, key: string, config?: RunnableConfig) => {
    if (reported.has(key)) return;
    reported.add(key);
    try {
      onFallback?.(fallback);
    } catch {
      // a reporting callback must not fail the call it reports
    }
    await dispatchInRun(STRUCTURED_OUTPUT_FALLBACK_EVENT, fallback, config);
  };
  return {
    async instead(model, jsonSchema, config) {
      const remembered = refused.get(modelKey(model)) ?? refused.get(schemaKey(model, jsonSchema));
      if (remembered !== undefined) return remembered.to;
      const subset = subsetSchemaOf(jsonSchema);
      if (subset.ok) return undefined;
      const fallback = fallbackFor(model, "schema", subset.reason);
      await report(fallback, `${modelKey(model)}\u0000schema\u0000${subset.reason}`, config);
      return fallback.to;
    },
    async afterRefusal(model, jsonSchema, error, config) {
      const reason = nativeRefusalOf(error);
      if (reason === undefined) return undefined;
      const fallback = fallbackFor(model, "refused", reason);
      const key = MODEL_REFUSALS.some((pattern) => pattern.test(reason))
        ? modelKey(model)
        : schemaKey(model, jsonSchema);
      refused.set(key, fallback);
      await report(fallback, `${key}\u0000refused`, config);
      return fallback.to;
    },
  };
}

function fallbackFor(
  model: ModelDescription,
  cause: StructuredOutputFallback["cause"],
  reason: string,
): StructuredOutputFallback {
  const to = strategyAfterNative(model);
  return { ...(model.modelId === undefined ? {} : { modelId: model.modelId }), from: "native", to, cause, reason };
}

/** A model as the memory knows it: its client and id (thinking changes where it falls back to, so it counts too). */
const modelKey = (model: ModelDescription): string =>
  `${model.provider ?? "?"}\u0000${model.modelId ?? "?"}\u0000${model.thinking}`;
/** A model and the schema it refused. */
const schemaKey = (model: ModelDescription, jsonSchema: JsonSchema): string =>
  `${modelKey(model)}\u0000${safeJson(jsonSchema)}`;
