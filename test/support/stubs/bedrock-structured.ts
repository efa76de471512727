/**
 * Structured output in the Bedrock stub: Converse `outputConfig.textFormat` (json_schema) and forced tool
 * choice with extended thinking. Kept out of bedrock.ts, which calls these two functions only.
 *
 * - A request with `outputConfig` on a model that supports it is answered with JSON that conforms to the
 *   schema, as constrained decoding does: the scripted text when it conforms, otherwise a value built from the
 *   schema. Scripted tool calls are answered as they are (a constrained model may still call tools).
 * - Models (../shared/PROVIDER_RULES.md, "Structured output"): AWS lists Claude Haiku 4.5, Sonnet 4.5, Opus 4.5
 *   and Opus 4.6; Anthropic adds Sonnet 4.6 and later GA models; Opus 4.7 is reported to be refused on Converse
 *   (M), and the stub refuses it. Anything else is rejected: for Claude with the text reported from Bedrock's
 *   Anthropic layer (M); for other models no text was found, so the stub's is its own.
 * - The schema must be inside the documented subset ({@link schemaSubsetViolation}); the two texts quoted in
 *   PROVIDER_RULES are Bedrock's (the fixed part), the others follow their form and are the stub's own.
 * - `toolChoice` `any` / `tool` with `additionalModelRequestFields.thinking` enabled is rejected with Anthropic's
 *   text as Bedrock relays it (H).
 */
import { Validator } from "@langchain/core/utils/json_schema";
import type { Rejection, ScriptedTurn } from "./common";

type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => typeof v === "object" && v !== null && !Array.isArray(v);

export const OUTPUT_CONFIG_UNSUPPORTED_CLAUDE =
  "The model returned the following errors: output_config.format: Extra inputs are not permitted";
export const OUTPUT_CONFIG_UNSUPPORTED_OTHER =
  "This model doesn't support the outputConfig field. Remove outputConfig and try again.";
export const THINKING_FORCED_TOOL_ERROR =
  "The model returned the following errors: Thinking may not be enabled when tool_choice forces tool use.";

/** Claude 4.5 and later (either naming scheme), except Opus 4.7 (reported refused on Converse). */
export function supportsOutputConfig(modelId: string): boolean {
  const id = modelId.toLowerCase();
  const familyFirst = /claude-(opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(id);
  const versionFirst = /claude-(\d+)(?:[-.](\d{1,2})(?!\d))?-(opus|sonnet|haiku)/.exec(id);
  const [family, majorText, minorText] = familyFirst
    ? [familyFirst[1], familyFirst[2], familyFirst[3]]
    : versionFirst
      ? [versionFirst[3], versionFirst[1], versionFirst[2]]
      : [];
  if (family === undefined) return false;
  const major = Number(majorText);
  const minor = Number(minorText ?? 0);
  if (family === "opus" && major === 4 && minor === 7) return false;
  return major > 4 || (major === 4 && minor >= 5);
}

/** Bedrock relays the model's refusal of a schema in this form (the prefix of OUTPUT_CONFIG_UNSUPPORTED_CLAUDE). */
const SCHEMA_ERROR_PREFIX = "The model returned the following errors: output_config.format.schema: ";
const SUBSET_FORMATS = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "uri",
  "ipv4",
  "ipv6",
  "uuid",
]);
/** Keywords of the subset, by where they may appear (annotations anywhere). */
const ANYWHERE = new Set([
  "type",
  "title",
  "description",
  "default",
  "examples",
  "enum",
  "const",
  "anyOf",
  "allOf",
  "$ref",
  "$defs",
  "definitions",
]);
const BY_TYPE: Record<string, Set<string>> = {
  object: new Set(["properties", "required", "additionalProperties"]),
  array: new Set(["items", "minItems"]),
  string: new Set(["format", "pattern"]),
  number: new Set(),
  integer: new Set(),
  boolean: new Set(),
  null: new Set(),
};

/**
 * Why Bedrock refuses this schema (the first reason, as its error text), or undefined when it is inside the
 * documented subset: no recursive or external `$ref`, no numeric or length constraints, `minItems` 0 or 1 only,
 * no `maxItems`, `enum` of scalars, the listed string formats, every object with `additionalProperties: false`.
 * Written from the docs, independently of src/structured/schema-subset.ts, so the one checks the other.
 */
export function schemaSubsetViolation(schema: Dict): string | undefined {
  const check = (node: unknown, refs: readonly string[]): string | undefined => {
    if (!isDict(node)) return "Schema must be an object";
    if (typeof node.$ref === "string") {
      const ref = node.$ref;
      if (!/^#\/(\$defs|definitions)\//.test(ref)) return `External or non-definition $ref is not supported: ${ref}`;
      if (refs.includes(ref)) return "Recursive schemas are not supported";
      const target = ref
        .slice(2)
        .split("/")
        .reduce<unknown>((at, part) => (isDict(at) ? at[part] : undefined), schema);
      if (target === undefined) return `Unresolved $ref: ${ref}`;
      return check(target, [...refs, ref]);
    }
    const types = Array.isArray(node.type) ? (node.type as unknown[]) : node.type === undefined ? [] : [node.type];
    for (const type of types) {
      if (typeof type !== "string" || !(type in BY_TYPE)) return `Unsupported type ${JSON.stringify(type)}`;
    }
    const unsupported = Object.keys(node).filter(
      (key) => !ANYWHERE.has(key) && !types.some((t) => BY_TYPE[t as string].has(key)),
    );
    const typeNames = types.join("' | '") || "any";
    if (unsupported.length > 0)
      return `For '${typeNames}' type, properties ${unsupported.sort().join(", ")} are not supported`;
    if (types.length === 0 && !["enum", "const", "anyOf", "allOf"].some((key) => key in node))
      return "A schema must have a type";
    if (types.includes("object") && node.additionalProperties !== false) {
      return "For 'object' type, 'additionalProperties' must be explicitly set to false";
    }
    if ("minItems" in node && node.minItems !== 0 && node.minItems !== 1) {
      return "For 'array' type, 'minItems' values other than 0 or 1 are not supported";
    }
    if ("format" in node && !SUBSET_FORMATS.has(node.format as string)) {
      return `For 'string' type, format ${JSON.stringify(node.format)} is not supported`;
    }
    const scalar = (v: unknown) => v === null || ["string", "number", "boolean"].includes(typeof v);
    const scalarEnum = Array.isArray(node.enum) && node.enum.every(scalar);
    if ("enum" in node && !scalarEnum) return "Enum values must be strings, numbers, booleans or null";
    if ("const" in node && !scalar(node.const)) return "Const values must be strings, numbers, booleans or null";
    const children: unknown[] = [
      ...(isDict(node.properties) ? Object.values(node.properties) : []),
      ...(node.items === undefined ? [] : [node.items]),
      ...(Array.isArray(node.anyOf) ? node.anyOf : []),
      ...(Array.isArray(node.allOf) ? node.allOf : []),
      ...(isDict(node.$defs) ? Object.values(node.$defs) : []),
      ...(isDict(node.definitions) ? Object.values(node.definitions) : []),
    ];
    for (const child of children) {
      const found = check(child, refs);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const found = check(schema, []);
  if (found !== undefined) return SCHEMA_ERROR_PREFIX + found;
  const { unions, optional } = complexityOf(schema);
  if (unions > MAX_UNION_PARAMETERS) {
    const counted = `(${unions} parameters with type arrays or anyOf)`;
    return `${RELAYED}Schemas contains too many parameters with union types ${counted} which exceeds the limit: ${MAX_UNION_PARAMETERS}`;
  }
  if (optional > MAX_OPTIONAL_PARAMETERS) return `${RELAYED}${GRAMMAR_TOO_LARGE}`;
  return undefined;
}

const RELAYED = "The model returned the following errors: ";
/** Anthropic's text for a schema over its compilation limits (anthropic-sdk-python#1185, claude-code#55539; H for the Messages API). */
export const GRAMMAR_TOO_LARGE =
  "The compiled grammar is too large, which would cause performance issues. " +
  "Simplify your tool schemas or reduce the number of strict tools.";
/**
 * Anthropic's schema complexity limits ("Structured outputs", complexity limits): at most 16 parameters with a
 * union type (`anyOf` or a type list) and 24 optional properties across the schema, `$ref`s counted where used.
 */
export const MAX_UNION_PARAMETERS = 16;
export const MAX_OPTIONAL_PARAMETERS = 24;

function complexityOf(schema: Dict): { unions: number; optional: number } {
  const counts = { unions: 0, optional: 0 };
  const visit = (node: unknown, depth: number): void => {
    if (!isDict(node) || depth > 64) return;
    if (typeof node.$ref === "string") {
      visit(resolveRef(node.$ref, schema), depth + 1);
      return;
    }
    if (Array.isArray(node.anyOf) || (Array.isArray(node.type) && node.type.length > 1)) counts.unions++;
    if (isDict(node.properties)) {
      const required = Array.isArray(node.required) ? node.required : [];
      counts.optional += Object.keys(node.properties).filter((key) => !required.includes(key)).length;
      for (const child of Object.values(node.properties)) visit(child, depth + 1);
    }
    visit(node.items, depth + 1);
    for (const key of ["anyOf", "allOf"])
      if (Array.isArray(node[key])) for (const child of node[key] as unknown[]) visit(child, depth + 1);
  };
  visit(schema, 0);
  return counts;
}

/** The JSON schema of a request's `outputConfig`, or undefined when there is none (or it is malformed). */
export function outputSchemaOf(body: unknown): Dict | undefined {
  if (!isDict(body) || !isDict(body.outputConfig)) return undefined;
  const textFormat = body.outputConfig.textFormat;
  if (!isDict(textFormat) || !isDict(textFormat.structure) || !isDict(textFormat.structure.jsonSchema))
    return undefined;
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
        message:
          "The value at outputConfig.textFormat is invalid: expected type json_schema and " +
          "structure.jsonSchema.schema, a JSON object as a string.",
      });
    } else if (!supportsOutputConfig(modelId)) {
      violations.push({
        rule: "outputConfig-unsupported",
        message: /claude/i.test(modelId) ? OUTPUT_CONFIG_UNSUPPORTED_CLAUDE : OUTPUT_CONFIG_UNSUPPORTED_OTHER,
      });
    } else {
      const refused = schemaSubsetViolation(outputSchemaOf(body)!);
      if (refused !== undefined) violations.push({ rule: "outputConfig-schema", message: refused });
    }
  }
  if (forcesTool(body) && thinkingOn(body))
    violations.push({ rule: "thinking-forced-tool", message: THINKING_FORCED_TOOL_ERROR });
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
  for (const key of ["anyOf", "oneOf", "allOf"])
    if (Array.isArray(schema[key])) return sampleOf((schema[key] as unknown[])[0], root, depth + 1);
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
