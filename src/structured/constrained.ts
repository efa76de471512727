/**
 * Sending a constrained request: Bedrock `outputConfig.textFormat`, Anthropic `output_config.format`, or one forced
 * tool call, and reading its answer back as JSON text (so that every strategy is parsed and validated by the same
 * code).
 *
 * Bedrock: ChatBedrockConverse (@langchain/aws 1.4) sends no `outputConfig` and has no request hook of its own
 * (its only client customisation, `defaultHeaders`, is itself an SDK middleware). Two ways exist without a fork:
 * an AWS SDK middleware on its BedrockRuntimeClient, or its `invocationParams(options)`, the one method every
 * request path (converse, converse-stream) calls to build the Converse fields next to `messages` and `system`.
 * We use `invocationParams`, on a derived object (`Object.create(model)`): the constraint belongs to one model
 * object, the user's model and its client are not changed (a client shared by other models keeps sending what
 * they send), and nothing global is needed. An SDK middleware would have to be added to the user's (possibly
 * shared) client and be told per call which schema to send: through AsyncLocalStorage (which leaks into every
 * other Bedrock call made inside that scope) or a marker in `requestMetadata` (a user-facing field). The test
 * stub checks that the field reaches the wire on both paths, so a change in @langchain/aws shows up at once.
 */
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { withInstance, type ModelDescription } from "../models/detect";
import type { JsonSchema, OutputFormat } from "./format";
import { formatInstructions } from "./instructions";
import { answerText, textOnlyAnswer } from "./parse";
import { subsetSchemaOf } from "./schema-subset";
import type { StructuredOutputStrategy } from "./strategy";
import { ToolCallRepairInputError, boundary, expectedInput } from "../errors";
import { isDict, type Dict } from "../values";

/** Name of the forced tool and of the Bedrock JSON schema when the schema has no usable title. */
const DEFAULT_FORMAT_NAME = "structured_response";

/** Tool and schema names: 1 to 64 of [a-zA-Z0-9_-] (Bedrock B4, OpenAI O5). */
export function formatNameOf(format: Pick<OutputFormat, "name">, taken: ReadonlySet<string> = new Set()): string {
  const cleaned = (format.name ?? "").replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
  let name = /[a-zA-Z0-9]/.test(cleaned) ? cleaned : DEFAULT_FORMAT_NAME;
  for (let i = 2; taken.has(name); i++) name = `${DEFAULT_FORMAT_NAME}_${i}`;
  return name;
}

/**
 * The schema as constrained decoding takes it (Bedrock's and Anthropic's JSON Schema subset, see
 * schema-subset.ts): unsupported constraints moved into `description`, `additionalProperties: false` on every
 * object, internal `$ref`s inlined. A schema the subset cannot express (a record or open object, a recursive
 * schema) is a TypeError naming what; the wrappers check first and use another strategy for it. The input is
 * not changed; the answer is still validated against the user's own schema. Errors name `fn` and `argument`.
 */
export function strictJsonSchema(schema: JsonSchema, fn = "strictJsonSchema", argument = "schema"): JsonSchema {
  if (!isDict(schema)) throw expectedInput(fn, argument, "a JSON schema object", schema);
  const subset = subsetSchemaOf(schema);
  if (!subset.ok) {
    const message = `${fn}: ${argument} cannot be sent as a constrained format: ${subset.reason}. Use the "tool" or "prompted" strategy.`;
    throw new ToolCallRepairInputError(message, { argument });
  }
  return subset.schema;
}

/** Converse `outputConfig` for a format: `textFormat` json_schema, the schema as a JSON string (as the API wants it). */
export const bedrockOutputConfig = boundary(
  "bedrockOutputConfig",
  function bedrockOutputConfig(format: Pick<OutputFormat, "jsonSchema" | "name">): Dict {
    const fn = "bedrockOutputConfig";
    if (!isDict(format))
      throw expectedInput(fn, "format", "an OutputFormat (from outputFormatOf) or { jsonSchema, name? }", format);
    if (format.name !== undefined && typeof format.name !== "string")
      throw expectedInput(fn, "format.name", "a string or undefined", format.name);
    const strict = strictJsonSchema(format.jsonSchema, fn, "format.jsonSchema");
    const description = typeof strict.description === "string" ? { description: strict.description } : {};
    // The subset is a tree of plain JSON values: it always serialises.
    const jsonSchema = { schema: JSON.stringify(strict), name: formatNameOf(format), ...description };
    return { textFormat: { type: "json_schema", structure: { jsonSchema } } };
  },
);

/**
 * A ChatBedrockConverse that sends `outputConfig` with every request: a derived object whose `invocationParams`
 * adds it (see the module comment). Everything else (client, model id, fields, callbacks) is the model's own.
 */
export const withBedrockOutputConfig = boundary("withBedrockOutputConfig", function withBedrockOutputConfig<
  M extends object,
>(model: M, outputConfig: Dict): M {
  const fn = "withBedrockOutputConfig";
  const base = (model as { invocationParams?: unknown } | null)?.invocationParams;
  if (typeof base !== "function")
    throw expectedInput(fn, "model", "a ChatBedrockConverse (a model with invocationParams())", model);
  if (!isDict(outputConfig))
    throw expectedInput(fn, "outputConfig", "an object (from bedrockOutputConfig)", outputConfig);
  const derived = Object.create(model) as M;
  Object.defineProperty(derived, "invocationParams", {
    value(this: unknown, options: unknown): Dict {
      return { ...base.call(this, options), outputConfig };
    },
    writable: true,
    configurable: true,
  });
  return derived;
});

/** The tool that carries the answer under the `tool` strategy (OpenAI function format: every client converts it). */
function answerTool(format: OutputFormat, name: string): Dict {
  const description =
    typeof format.jsonSchema.description === "string"
      ? format.jsonSchema.description
      : "Give the final answer in the required format.";
  return { type: "function", function: { name, description, parameters: format.jsonSchema } };
}

/** The user turn that closes the structured call: never a prefill, and it says what the constraint is. */
function closingUserTurn(strategy: StructuredOutputStrategy, format: OutputFormat, toolName: string): HumanMessage {
  return new HumanMessage(
    strategy === "tool"
      ? `Give your final answer now by calling the \`${toolName}\` tool with it. Do not call any other tool.`
      : strategy === "native"
        ? "Give your final answer now, as the JSON value of the required response format. Do not call any tool."
        : `Give your final answer now. ${formatInstructions(format)}`,
  );
}

/**
 * The model bound for one strategy, and the turn that closes its request. The model's own bound call options
 * (thinking, inference settings) are kept; tools and tool choice are replaced by the agent's tools (and the
 * answer tool, forced, under `tool`). `call` takes the history and answers with the JSON as its text (a forced
 * tool call's arguments, serialised).
 */
export async function prepareStructuredCall(
  setup: {
    strategy: StructuredOutputStrategy;
    model: ModelDescription;
    format: OutputFormat;
    /** The agent's tools: bound so that a history holding tool blocks is accepted (Bedrock B3), never chosen. */
    tools: readonly unknown[];
  },
  config?: RunnableConfig,
) {
  const { strategy, format } = setup;
  const model = await withInstance(setup.model, config);
  const instance = model.instance;
  if (instance === undefined) throw new TypeError(`No chat model found for the ${strategy} structured-output call`);
  const { tools: _tools, tool_choice: _choice, ...callOptions } = model.callOptions;
  const taken = new Set(setup.tools.map(toolNameOf).filter((n) => n !== undefined));
  const toolName = formatNameOf(format, taken);
  let target = instance;
  let options = callOptions;
  if (strategy === "tool") options = { ...callOptions, tool_choice: toolName };
  else if (strategy === "native" && model.provider === "bedrock")
    target = withBedrockOutputConfig(instance, bedrockOutputConfig(format));
  else if (strategy === "native") {
    const outputConfig = isDict(callOptions.outputConfig) ? callOptions.outputConfig : {};
    const schema = strictJsonSchema(format.jsonSchema);
    options = { ...callOptions, outputConfig: { ...outputConfig, format: { type: "json_schema", schema } } };
  }
  const tools = strategy === "tool" ? [...setup.tools, answerTool(format, toolName)] : setup.tools;
  const runnable = bound(target, tools, options);
  const call = async (messages: BaseMessage[], callConfig?: RunnableConfig) => {
    const answer = (await runnable.invoke(messages, callConfig)) as AIMessage;
    return strategy === "tool" ? toolAnswerAsText(answer, toolName) : answer;
  };
  return { call, closingTurn: closingUserTurn(strategy, format, toolName) };
}

/** `model.bindTools(tools, options)`, or `withConfig(options)` when there are no tools. */
function bound(model: Dict, tools: readonly unknown[], options: Dict) {
  type Bindable = { invoke(input: BaseMessage[], config?: RunnableConfig): Promise<unknown> };
  if (tools.length > 0 && typeof model.bindTools === "function") {
    return (model.bindTools as (t: unknown[], o: Dict) => Bindable).call(model, [...tools], options);
  }
  if (Object.keys(options).length > 0 && typeof model.withConfig === "function") {
    return (model.withConfig as (o: Dict) => Bindable).call(model, options);
  }
  return model as unknown as Bindable;
}

/** The forced call's arguments as the answer's text; the rest of the message kept. */
function toolAnswerAsText(answer: AIMessage, toolName: string): AIMessage {
  const call = answer.tool_calls?.find((c) => c.name === toolName);
  const { id, response_metadata } = answer;
  if (call === undefined) return new AIMessage({ content: answerText(answer), id, response_metadata });
  const content = JSON.stringify(call.args ?? {});
  return new AIMessage({ content, id, response_metadata, usage_metadata: answer.usage_metadata });
}

function toolNameOf(tool: unknown): string | undefined {
  const parts = isDict(tool) ? [tool, tool.function, tool.toolSpec] : [];
  return parts.map((part) => (isDict(part) ? part.name : undefined)).find((name) => typeof name === "string");
}

/**
 * The request of a structured call after the agent's final answer: the format's own prompt as a system message
 * (as createReactAgent's extra call does), the history, the answer as text (never blank: B8/B9, A9), and the
 * closing user turn.
 */
export function structuredCallInput(
  history: BaseMessage[],
  finalAnswer: BaseMessage,
  closingTurn: HumanMessage,
  format: Pick<OutputFormat, "prompt">,
): BaseMessage[] {
  const answer = textOnlyAnswer(answerText(finalAnswer), finalAnswer.id);
  const prompt = format.prompt?.trim() ? [new SystemMessage(format.prompt)] : [];
  return [...prompt, ...history, answer, closingTurn];
}
