/**
 * Structured output in the Bedrock stub: Converse `outputConfig.textFormat` (json_schema) and forced tool
 * choice with extended thinking. Kept out of bedrock.ts, which calls these two functions only.
 *
 * - A request with `outputConfig` on a model that supports it is answered with JSON that conforms to the
 *   schema, as constrained decoding does: the scripted text when it conforms, otherwise a value built from the
 *   schema. Scripted tool calls are answered as they are (a constrained model may still call tools).
 * - Supported (AWS's list at launch, 2026-02-04, and later Claude): Claude 4.5 and later. Anything else is
 *   rejected. For Claude the text is the one reported from Bedrock's Anthropic layer (M); for other models no
 *   text was found, so the stub's is its own and only the rule id should be matched.
 * - `toolChoice` `any` / `tool` with `additionalModelRequestFields.thinking` enabled is rejected with Anthropic's
 *   text as Bedrock relays it (H).
 */
import { Validator } from "@langchain/core/utils/json_schema";
import type { Rejection, ScriptedTurn } from "./common";

type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => typeof v === "object" && v !== null && !Array.isArray(v);

export const OUTPUT_CONFIG_UNSUPPORTED_CLAUDE =
  "The model returned the following errors: output_config.format: Extra inputs are not permitted";
export const OUTPUT_CONFIG_UNSUPPORTED_OTHER = "This model doesn't support the outputConfig field. Remove outputConfig and try again.";
export const THINKING_FORCED_TOOL_ERROR =
  "The model returned the following errors: Thinking may not be enabled when tool_choice forces tool use.";

/** Claude 4.5 and later (either naming scheme). */
export function supportsOutputConfig(modelId: string): boolean {
  const id = modelId.toLowerCase();
  const m = /claude-(?:opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(id) ?? /claude-(\d+)(?:[-.](\d{1,2})(?!\d))?-(?:opus|sonnet|haiku)/.exec(id);
  if (!m) return false;
  const major = Number(m[1]);
  const minor = Number(m[2] ?? 0);
  return major > 4 || (major === 4 && minor >= 5);
}

/** The JSON schema of a request's `outputConfig`, or undefined when there is none (or it is malformed). */
export function outputSchemaOf(body: unknown): Dict | undefined {
  if (!isDict(body) || !isDict(body.outputConfig)) return undefined;
  const textFormat = body.outputConfig.textFormat;
  if (!isDict(textFormat) || !isDict(textFormat.structure) || !isDict(textFormat.structure.jsonSchema)) return undefined;
  const schema = textFormat.structure.jsonSchema.schema;
  if (typeof schema !== "string") return undefined;
  try {
    const parsed = JSON.parse(schema) as unknown;
    return isDict(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Rejections for `outputConfig` and forced tool choice (empty when the request is fine). */
export function structuredOutputViolations(modelId: string, body: unknown): Rejection[] {
  if (!isDict(body)) return [];
  const violations: Rejection[] = [];
  if (body.outputConfig !== undefined) {
    const textFormat = isDict(body.outputConfig) ? body.outputConfig.textFormat : undefined;
    if (!isDict(textFormat) || textFormat.type !== "json_schema" || outputSchemaOf(body) === undefined) {
      violations.push({
        rule: "outputConfig-shape",
        message: "The value at outputConfig.textFormat is invalid: expected type json_schema and structure.jsonSchema.schema, a JSON object as a string.",
      });
    } else if (!supportsOutputConfig(modelId)) {
      violations.push({
        rule: "outputConfig-unsupported",
        message: /claude/i.test(modelId) ? OUTPUT_CONFIG_UNSUPPORTED_CLAUDE : OUTPUT_CONFIG_UNSUPPORTED_OTHER,
      });
    }
  }
  if (forcesTool(body) && thinkingOn(body)) violations.push({ rule: "thinking-forced-tool", message: THINKING_FORCED_TOOL_ERROR });
  return violations;
}

function forcesTool(body: Dict): boolean {
  const choice = isDict(body.toolConfig) ? body.toolConfig.toolChoice : undefined;
  return isDict(choice) && ("any" in choice || "tool" in choice);
}

function thinkingOn(body: Dict): boolean {
  const fields = isDict(body.additionalModelRequestFields) ? body.additionalModelRequestFields : {};
  const thinking = fields.thinking;
  return isDict(thinking) && (thinking.type === "enabled" || thinking.type === "adaptive");
}

/** The turn the stub answers: under `outputConfig`, text that conforms to the schema. */
export function constrainedTurn(turn: ScriptedTurn, body: unknown): ScriptedTurn {
  const schema = outputSchemaOf(body);
  if (schema === undefined || (turn.toolCalls?.length ?? 0) > 0) return turn;
  if (turn.text !== undefined && conforms(turn.text, schema)) return turn;
  return { text: JSON.stringify(sampleOf(schema, schema, 0)) };
}

function conforms(text: string, schema: Dict): boolean {
  try {
    return new Validator(schema as never, "2020-12").validate(JSON.parse(text)).valid;
  } catch {
    return false;
  }
}

/** A small value the schema accepts (required properties only; the first enum / const / anyOf branch). */
function sampleOf(schema: unknown, root: Dict, depth: number): unknown {
  if (!isDict(schema) || depth > 16) return null;
  if (typeof schema.$ref === "string") return sampleOf(resolveRef(schema.$ref, root), root, depth + 1);
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ["anyOf", "oneOf", "allOf"]) if (Array.isArray(schema[key])) return sampleOf((schema[key] as unknown[])[0], root, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const properties = isDict(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      return Object.fromEntries(required.map((key) => [key, sampleOf(properties[key], root, depth + 1)]));
    }
    case "array":
      return [];
    case "string":
      return "text";
    case "number":
    case "integer":
      return typeof schema.minimum === "number" ? schema.minimum : 0;
    case "boolean":
      return false;
    default:
      return null;
  }
}

function resolveRef(ref: string, root: Dict): unknown {
  let node: unknown = root;
  for (const part of ref.replace(/^#\/?/, "").split("/").filter(Boolean)) node = isDict(node) ? node[part] : undefined;
  return node;
}
