/**
 * A response format, whatever the user gave (zod 3, zod 4, a Standard JSON Schema, a JSON schema object,
 * createReactAgent's `{ schema, prompt }`, langchain's toolStrategy / providerStrategy or a list of them),
 * reduced to the two things the prompted strategy needs: the JSON schema to show the model, and a validator.
 */
import { Validator, toJsonSchema } from "@langchain/core/utils/json_schema";
import { isStandardSchema, isSerializableSchema } from "@langchain/core/utils/standard_schema";
import { interopSafeParseAsync, isInteropZodSchema, type InteropZodType } from "@langchain/core/utils/types";
import { expectedInput, readingInput } from "../errors";
import { isDict, type Dict } from "../values";

export type JsonSchema = Record<string, unknown>;

export type Validation<T> = { ok: true; value: T } | { ok: false; issues: string[] };

export interface OutputFormat<T = unknown> {
  /** JSON schema shown to the model (and sent as the constrained format). */
  jsonSchema: JsonSchema;
  /** A name for the format where a provider wants one (the schema's `title`); default "structured_response". */
  name?: string;
  /** Instructions that came with the format (`{ schema, prompt }`), placed before the schema. */
  prompt?: string;
  /** Checks a parsed JSON value; `value` is the schema's output (zod defaults and transforms applied). */
  validate(value: unknown): Promise<Validation<T>>;
}

/** JSON Schema keywords: a plain object with none of them is not a schema (it would validate anything). */
const JSON_SCHEMA_KEYWORDS = new Set([
  "type",
  "properties",
  "items",
  "prefixItems",
  "required",
  "additionalProperties",
  "patternProperties",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "enum",
  "const",
  "$ref",
  "$defs",
  "definitions",
  "if",
  "then",
  "else",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "minItems",
  "maxItems",
]);

/**
 * The format for one schema in any supported form: a zod 3 or zod 4 schema, a Standard JSON Schema (validate and
 * JSON Schema form), a JSON schema object, or an OpenAI-style function definition `{ name, parameters }`. Throws a
 * TypeError naming `argument` for anything else (a Standard Schema without a JSON Schema form, a plain object
 * with no JSON Schema keyword, a string, ...).
 */
export function outputFormatOf<T = unknown>(schema: unknown, prompt?: string, argument = "schema"): OutputFormat<T> {
  if (typeof argument !== "string")
    throw expectedInput("outputFormatOf", "argument", "the name of the schema's argument (a string)", argument);
  if (prompt !== undefined && typeof prompt !== "string")
    throw expectedInput("outputFormatOf", "prompt", "a string or undefined", prompt);
  // Read under the input guard (a schema whose getters throw, a revoked proxy, one that cannot be converted);
  // a schema of no supported kind is the TypeError below.
  const format = readingInput(() => formatOf<T>(schema, prompt), "outputFormatOf", argument);
  if (format !== undefined) return format;
  throw new TypeError(
    `Unsupported response format for '${argument}': ` +
      `${readingInput(() => describe(schema), "outputFormatOf", argument)}. Expected a zod schema, a ` +
      "Standard JSON Schema, a JSON schema object or an OutputFormat from outputFormatOf().",
  );
}

function formatOf<T>(schema: unknown, prompt: string | undefined): OutputFormat<T> | undefined {
  if (isInteropZodSchema(schema)) return zodFormat<T>(schema as InteropZodType<T>, prompt);
  if (isSerializableSchema(schema)) return standardFormat<T>(schema, prompt);
  if (isDict(schema) && !isStandardSchema(schema)) {
    const jsonSchema = functionParametersOr(schema);
    if (isJsonSchema(jsonSchema)) return jsonSchemaFormat<T>(jsonSchema, prompt);
  }
  return undefined;
}

function isFormat(value: unknown): value is OutputFormat {
  return (
    isDict(value) &&
    isDict(value.jsonSchema) &&
    typeof value.validate === "function" &&
    !isInteropZodSchema(value) &&
    !isStandardSchema(value)
  );
}

/** `value` if it is an OutputFormat, else the format of the schema it is (see {@link outputFormatOf}). */
export function toOutputFormat<T = unknown>(value: unknown, argument: string): OutputFormat<T> {
  const format = readingInput(() => isFormat(value), "outputFormatOf", argument);
  return format ? (value as OutputFormat<T>) : outputFormatOf<T>(value, undefined, argument);
}

function isJsonSchema(schema: Dict): boolean {
  for (const key of Object.keys(schema)) if (JSON_SCHEMA_KEYWORDS.has(key)) return true;
  return false;
}

/**
 * createReactAgent's `responseFormat`: a schema, or `{ schema, prompt?, strict?, ... }` (told apart the way
 * createReactAgent does: an object with a `schema` key).
 */
export function reactOutputFormat<T = unknown>(responseFormat: unknown): OutputFormat<T> {
  const wrapped = readingInput(
    () =>
      isDict(responseFormat) && "schema" in responseFormat && !isInteropZodSchema(responseFormat)
        ? {
            schema: responseFormat.schema,
            prompt: typeof responseFormat.prompt === "string" ? responseFormat.prompt : undefined,
          }
        : undefined,
    "withPromptedStructuredOutput",
    "responseFormat",
  );
  if (wrapped) return outputFormatOf<T>(wrapped.schema, wrapped.prompt, "responseFormat.schema");
  return outputFormatOf<T>(responseFormat, undefined, "responseFormat");
}

/**
 * langchain createAgent's `responseFormat`: a schema, toolStrategy(...) (an array of ToolStrategy),
 * providerStrategy(...), or a list of schemas (any one of them is accepted, as with the tool strategy).
 * Undefined for "no structured output" (`{ __responseFormatUndefined: true }`, an empty list, nothing).
 */
export function agentOutputFormat<T = unknown>(responseFormat: unknown): OutputFormat<T> | undefined {
  if (responseFormat == null || (isDict(responseFormat) && "__responseFormatUndefined" in responseFormat))
    return undefined;
  const items = Array.isArray(responseFormat) ? responseFormat : [responseFormat];
  if (items.length === 0) return undefined;
  const formats = items.map((item) =>
    outputFormatOf<T>(isStrategy(item) ? item.schema : item, undefined, "responseFormat"),
  );
  return formats.length === 1 ? formats[0] : anyOfFormat(formats);
}

/** Accepts a value that any of the formats accepts (first match wins). */
function anyOfFormat<T>(formats: OutputFormat<T>[]): OutputFormat<T> {
  return {
    jsonSchema: { anyOf: formats.map((f) => f.jsonSchema) },
    async validate(value) {
      const issues: string[] = [];
      for (const [i, format] of formats.entries()) {
        const result = await format.validate(value);
        if (result.ok) return result;
        issues.push(...result.issues.map((issue) => `format ${i + 1}: ${issue}`));
      }
      return { ok: false, issues };
    },
  };
}

/** langchain's ToolStrategy / ProviderStrategy, by shape (works across duplicate package copies). */
function isStrategy(value: unknown): value is { schema: unknown } {
  if (!isDict(value) || !isDict(value.schema)) return false;
  const isTool = isDict(value.tool) && typeof value.parse === "function";
  const isProvider = typeof value.strict === "boolean" && typeof value.parse === "function";
  return isTool || isProvider;
}

/** An OpenAI-style function definition `{ name, parameters }` stands for its parameters. */
function functionParametersOr(schema: Dict): JsonSchema {
  const isFunctionDefinition =
    typeof schema.name === "string" && isDict(schema.parameters) && !("type" in schema) && !("properties" in schema);
  return isFunctionDefinition ? (schema.parameters as JsonSchema) : schema;
}

function zodFormat<T>(schema: InteropZodType<T>, prompt?: string): OutputFormat<T> {
  const jsonSchema = withoutMetaKeys(toJsonSchema(schema) as JsonSchema);
  return {
    jsonSchema,
    name: titleOf(jsonSchema),
    prompt,
    async validate(value) {
      const result = await interopSafeParseAsync(schema, value);
      if (result.success) return { ok: true, value: result.data };
      return { ok: false, issues: result.error.issues.map((issue) => pathed(issue.path, issue.message)) };
    },
  };
}

function standardFormat<T>(schema: unknown, prompt?: string): OutputFormat<T> {
  const standard = (schema as { "~standard": { validate(v: unknown): unknown } })["~standard"];
  const jsonSchema = withoutMetaKeys(toJsonSchema(schema as Parameters<typeof toJsonSchema>[0]) as JsonSchema);
  return {
    jsonSchema,
    name: titleOf(jsonSchema),
    prompt,
    async validate(value) {
      const result = (await standard.validate(value)) as {
        value?: T;
        issues?: readonly { message: string; path?: readonly (PropertyKey | { key: PropertyKey })[] }[];
      };
      if (!result.issues) return { ok: true, value: result.value as T };
      return {
        ok: false,
        issues: result.issues.map((issue) =>
          pathed((issue.path ?? []).map((p) => (isDict(p) ? p.key : p)) as PropertyKey[], issue.message),
        ),
      };
    },
  };
}

function jsonSchemaFormat<T>(schema: JsonSchema, prompt?: string): OutputFormat<T> {
  // All errors (not short-circuited) so that one correction can fix every problem at once.
  // The validator marks the schema it is given (`__absolute_uri__` on every subschema): give it a copy, never
  // the caller's object. A schema JSON cannot copy (a cycle) is refused by the input guard of outputFormatOf.
  const validator = new Validator(
    JSON.parse(JSON.stringify(schema)) as ConstructorParameters<typeof Validator>[0],
    "2020-12",
    false,
  );
  return {
    jsonSchema: withoutMetaKeys(schema),
    name: titleOf(schema),
    prompt,
    async validate(value) {
      const result = validator.validate(value);
      if (result.valid) return { ok: true, value: value as T };
      return { ok: false, issues: leafErrors(result.errors) };
    },
  };
}

/**
 * cfworker's validator reports each failure once per enclosing keyword ("Property x does not match
 * schema" above the real reason); keep the innermost ones: those whose keyword location is no other's ancestor.
 */
function leafErrors(errors: readonly { instanceLocation: string; error: string; keywordLocation: string }[]): string[] {
  const ancestors = new Set<string>();
  for (const e of errors) {
    for (let i = e.keywordLocation.indexOf("/"); i >= 0; i = e.keywordLocation.indexOf("/", i + 1)) {
      ancestors.add(e.keywordLocation.slice(0, i));
    }
  }
  const leaves = errors.filter((e) => !ancestors.has(e.keywordLocation));
  return [...new Set(leaves.map((e) => `${e.instanceLocation.replace(/^#\/?/, "") || "(root)"}: ${e.error}`))];
}

function pathed(path: readonly PropertyKey[], message: string): string {
  return `${path.length > 0 ? path.map(String).join(".") : "(root)"}: ${message}`;
}

const titleOf = (schema: JsonSchema): string | undefined =>
  typeof schema.title === "string" ? schema.title : undefined;

/** `$schema` tells the model nothing and costs tokens. */
function withoutMetaKeys(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (isStandardSchema(value)) return "a Standard Schema without a JSON Schema form";
  if (Array.isArray(value)) return "an array";
  if (isDict(value)) return "an object with no JSON Schema keyword (type, properties, anyOf, ...)";
  return typeof value;
}
