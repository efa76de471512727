/**
 * A response format, whatever the user gave (zod 3, zod 4, a Standard JSON Schema, a JSON schema object,
 * createReactAgent's `{ schema, prompt }`, langchain's toolStrategy / providerStrategy or a list of them),
 * reduced to the two things the prompted strategy needs: the JSON schema to show the model, and a validator.
 */
import {
  type BaseMessage,
  type BaseMessageLike,
  HumanMessage,
  SystemMessage,
  coerceMessageLikeToMessage,
} from "@langchain/core/messages";
import { Validator, toJsonSchema } from "@langchain/core/utils/json_schema";
import { isStandardSchema, isSerializableSchema, type SerializableSchema } from "@langchain/core/utils/standard_schema";
import { isInteropZodSchema, type InteropZodType } from "@langchain/core/utils/types";
import { rebuildMessage } from "../messages/build";
import { isDict, nonEmptyString } from "../values";

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
const JSON_SCHEMA_KEYWORDS = new Set(
  (
    "type properties items prefixItems required additionalProperties patternProperties anyOf oneOf allOf not enum " +
    "const $ref $defs definitions if then else minimum maximum minLength maxLength pattern format minItems maxItems"
  ).split(" "),
);

/**
 * The format for one schema in any supported form: a zod 3 or zod 4 schema, a Standard JSON Schema (validate and
 * JSON Schema form) or a JSON schema object. Throws a TypeError naming `argument` for anything else (a Standard
 * Schema without a JSON Schema form, a plain object with no JSON Schema keyword, a string, ...).
 */
export function outputFormatOf(schema: unknown, prompt?: string, argument = "schema") {
  let validate: OutputFormat["validate"];
  // zod (3.25 and 4) is a Standard Schema too: its own validation, with zod's issues.
  if (isInteropZodSchema(schema) || isSerializableSchema(schema)) {
    validate = async (value) => {
      const result = await (schema as SerializableSchema)["~standard"].validate(value);
      if (!result.issues) return { ok: true, value: result.value };
      // Issues of zod or a Standard Schema, each with the path to the value at fault.
      const issues = result.issues.map(({ path = [], message }) => {
        const keys = path.map((p) => String(isDict(p) ? p.key : p));
        return `${keys.length ? keys.join(".") : "(root)"}: ${message}`;
      });
      return { ok: false, issues };
    };
  } else if (
    isDict(schema) &&
    !isStandardSchema(schema) &&
    Object.keys(schema).some((key) => JSON_SCHEMA_KEYWORDS.has(key))
  ) {
    // All errors (not short-circuited) so that one correction can fix every problem at once. The validator marks
    // the schema it is given (`__absolute_uri__` on every subschema): give it a copy, never the caller's object.
    const validator = new Validator(JSON.parse(JSON.stringify(schema)), "2020-12", false);
    validate = async (value) => {
      const { valid, errors } = validator.validate(value);
      if (valid) return { ok: true, value };
      // cfworker's validator reports each failure once per enclosing keyword ("Property x does not match
      // schema" above the real reason); keep the innermost ones: those whose keyword location is no other's ancestor.
      const ancestors = new Set<string>();
      for (const { keywordLocation: at } of errors)
        for (let i = at.indexOf("/"); i >= 0; i = at.indexOf("/", i + 1)) ancestors.add(at.slice(0, i));
      const issues = errors
        .filter((e) => !ancestors.has(e.keywordLocation))
        .map((e) => `${e.instanceLocation.replace(/^#\/?/, "") || "(root)"}: ${e.error}`);
      return { ok: false, issues: [...new Set(issues)] };
    };
  } else {
    throw new TypeError(
      `Unsupported response format for '${argument}'. Expected a zod schema, a Standard Schema with a JSON Schema ` +
        "form, or a JSON schema object (with a keyword such as type, properties or anyOf).",
    );
  }
  // A JSON schema object comes back as it is.
  // `$schema` dropped: it tells the model nothing and costs tokens. Named by the schema's title.
  const { $schema: _ignored, ...jsonSchema } = toJsonSchema(schema as InteropZodType) as JsonSchema;
  return { jsonSchema, name: nonEmptyString(jsonSchema.title), prompt, validate };
}

/** createReactAgent's `{ schema, prompt?, ... }` form of `responseFormat` (not a bare schema). */
export const isSchemaOptions = (value: unknown): value is { schema: unknown; prompt?: unknown } =>
  isDict(value) && "schema" in value && !isInteropZodSchema(value);

/**
 * createReactAgent's `responseFormat`: a schema, or `{ schema, prompt?, strict?, ... }` (told apart as
 * createReactAgent does: a `schema` key).
 */
export const reactOutputFormat = (format: unknown) =>
  isSchemaOptions(format)
    ? outputFormatOf(format.schema, nonEmptyString(format.prompt), "responseFormat.schema")
    : outputFormatOf(format, undefined, "responseFormat");

/** langchain's ToolStrategy and ProviderStrategy, by shape (works across duplicate package copies). */
export const isToolStrategy = (value: unknown): value is { schema: unknown } =>
  isDict(value) && isDict(value.tool) && typeof value.parse === "function";

/** The schema of a ToolStrategy or ProviderStrategy (a `strict` flag), or the value itself. */
export const schemaOfStrategy = (value: unknown) =>
  isDict(value) && typeof value.parse === "function" && (isDict(value.tool) || typeof value.strict === "boolean")
    ? value.schema
    : value;

/**
 * langchain createAgent's `responseFormat`: a schema, toolStrategy(...) (an array of ToolStrategy),
 * providerStrategy(...), or a list of schemas (any one of them is accepted, as with the tool strategy).
 * Undefined for "no structured output" (`{ __responseFormatUndefined: true }`, an empty list, nothing).
 */
export function agentOutputFormat(responseFormat: unknown): OutputFormat | undefined {
  if (responseFormat == null || (isDict(responseFormat) && "__responseFormatUndefined" in responseFormat)) return;
  const formats = [responseFormat]
    .flat()
    .map((item) => outputFormatOf(schemaOfStrategy(item), undefined, "responseFormat"));
  if (formats.length <= 1) return formats[0];
  // Accepts a value that any of the formats accepts (first match wins).
  return {
    jsonSchema: { anyOf: formats.map((f) => f.jsonSchema) },
    async validate(value) {
      const issues = [];
      for (const [i, format] of formats.entries()) {
        const result = await format.validate(value);
        if (result.ok) return result;
        issues.push(...result.issues.map((issue) => `format ${i + 1}: ${issue}`));
      }
      return { ok: false, issues };
    },
  };
}

/**
 * The text that replaces `responseFormat`: format instructions for the system prompt, the corrective user
 * message, and the helpers that put the instructions into a system message without losing its fields.
 */
/** Instructions for the agent's system prompt: the format's own prompt first, then the schema. */
export const formatInstructions = ({ prompt, jsonSchema }: Pick<OutputFormat, "jsonSchema" | "prompt">) =>
  [
    prompt?.trim(),
    "When you give your final answer (after any tool calls you need), reply with exactly one JSON value that " +
      "matches the JSON Schema below, and nothing else: no text before or after it. If you wrap it in a code " +
      "fence, use ```json. Do not call a tool to give the final answer.",
    "JSON Schema of the final answer:",
    JSON.stringify(jsonSchema),
  ]
    .filter(Boolean)
    .join("\n\n");

/** The user message of a corrective call: what was wrong, and the schema again. */
export const correctionMessage = (issues: string[], format: Pick<OutputFormat, "jsonSchema">) =>
  new HumanMessage(
    [
      "Your last reply cannot be used as the final answer. Problems:",
      issues.map((issue) => `- ${issue}`).join("\n"),
      "Reply again with only the corrected JSON value that matches this JSON Schema, and no other text:",
      JSON.stringify(format.jsonSchema),
    ].join("\n"),
  );

/** `text` appended to a system message, as a new SystemMessage with every other field kept. */
export function systemMessageWith(message: SystemMessage, text: string) {
  const { content } = message;
  return rebuildMessage(message, {
    content: typeof content === "string" ? promptWith(content, text) : [...content, { type: "text", text }],
  });
}

/** `text` appended to a prompt string (or used alone when there is none). */
export const promptWith = (prompt: string | undefined, text: string) =>
  prompt?.trim() ? `${prompt}\n\n${text}` : text;

/**
 * Model input with the instructions in its leading system message (added when there is none). Accepts what
 * a prompt function or runnable may produce: message-likes, a PromptValue (`toChatMessages`) or a string.
 */
export function withSystemInstructions(input: unknown, text: string) {
  const messages = toMessages(input);
  const [first, ...rest] = messages;
  return SystemMessage.isInstance(first)
    ? [systemMessageWith(first, text), ...rest]
    : [new SystemMessage(text), ...messages];
}

/** Messages from what a prompt produced: message-likes, a PromptValue or a string (a user message). */
export function toMessages(input: unknown) {
  if (typeof input === "string") return [new HumanMessage(input)];
  const value = input as { toChatMessages?(): BaseMessage[] };
  if (typeof value?.toChatMessages === "function") return value.toChatMessages();
  return (input as BaseMessageLike[]).map(coerceMessageLikeToMessage);
}
