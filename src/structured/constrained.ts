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
import { type AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import { withInstance, type ModelDescription } from "../models/detect";
import { formatInstructions, type OutputFormat } from "./format";
import { answerText, asText, textOnlyAnswer } from "./parse";
import { subsetSchemaOf } from "./schema-subset";
import type { StructuredOutputStrategy } from "./strategy";
import { ToolCallRepairInputError, boundary, expectedInput } from "../errors";
import type { Dict } from "../values";

/**
 * Tool and schema names: 1 to 64 of [a-zA-Z0-9_-] (Bedrock B4, OpenAI O5); "structured_response" when the schema
 * has no usable title, numbered past the names `taken`.
 */
export function formatNameOf({ name }: Pick<OutputFormat, "name">, taken: ReadonlySet<unknown> = new Set()) {
  const cleaned = (name ?? "").replace(/[^\w-]/g, "_").slice(0, 64);
  name = /[a-zA-Z0-9]/.test(cleaned) ? cleaned : "structured_response";
  for (let i = 2; taken.has(name); i++) name = `structured_response_${i}`;
  return name;
}

/** Converse `outputConfig` for a format: `textFormat` json_schema, the schema as a JSON string (as the API wants it). */
export const bedrockOutputConfig = boundary(
  "bedrockOutputConfig",
  (format: Pick<OutputFormat, "jsonSchema" | "name">) => {
    const subset = subsetSchemaOf(format.jsonSchema);
    if (!subset.ok)
      throw new ToolCallRepairInputError(
        `bedrockOutputConfig: format.jsonSchema cannot be sent as a constrained format: ${subset.reason}. ` +
          'Use the "tool" or "prompted" strategy.',
        { argument: "format.jsonSchema" },
      );
    const { description } = subset.schema;
    // The subset is a tree of plain JSON values: it always serialises.
    const jsonSchema = {
      schema: JSON.stringify(subset.schema),
      name: formatNameOf(format),
      ...(typeof description === "string" && { description }),
    };
    return { textFormat: { type: "json_schema", structure: { jsonSchema } } };
  },
);

/**
 * A ChatBedrockConverse that sends `outputConfig` with every request: a derived object whose `invocationParams`
 * adds it (see the module comment). Everything else (client, model id, fields, callbacks) is the model's own.
 */
export const withBedrockOutputConfig = boundary(
  "withBedrockOutputConfig",
  <M extends object>(model: M, outputConfig: Dict): M => {
    const base = (model as { invocationParams?: unknown } | null)?.invocationParams;
    if (typeof base !== "function")
      throw expectedInput(
        "withBedrockOutputConfig",
        "model",
        "a ChatBedrockConverse (a model with invocationParams())",
        model,
      );
    return Object.assign(Object.create(model), {
      invocationParams(options: unknown) {
        return { ...base.call(this, options), outputConfig };
      },
    });
  },
);

/**
 * The model bound for one strategy: the description's model (an initChatModel model built first) with its own
 * bound call options (thinking, inference settings) kept, tools and tool choice replaced by `tools` (and the
 * answer tool `toolName`, forced, under `tool`), and the constraint under `native`.
 */
export async function constrainedModel(
  strategy: StructuredOutputStrategy,
  description: ModelDescription,
  format: OutputFormat,
  tools: readonly unknown[],
  toolName = "",
  config?: RunnableConfig,
) {
  const { instance, callOptions, provider } = await withInstance(description, config);
  const { tools: _tools, tool_choice: _choice, ...options } = callOptions;
  let model = instance as unknown as Runnable & { bindTools?(tools: unknown[], options: Dict): Runnable };
  if (strategy === "tool") {
    const { description: d } = format.jsonSchema;
    const description = typeof d === "string" ? d : "Give the final answer in the required format.";
    tools = [...tools, { type: "function", function: { name: toolName, description, parameters: format.jsonSchema } }];
    options.tool_choice = toolName;
  } else if (strategy === "native" && provider === "bedrock")
    model = withBedrockOutputConfig(model, bedrockOutputConfig(format));
  else if (strategy === "native") {
    // The fallback has checked the schema is in the subset.
    const { schema } = subsetSchemaOf(format.jsonSchema) as { schema: Dict };
    options.outputConfig = { ...(options.outputConfig as Dict), format: { type: "json_schema", schema } };
  }
  if (tools.length && typeof model.bindTools === "function") return model.bindTools([...tools], options);
  if (Object.keys(options).length && typeof model.withConfig === "function") return model.withConfig(options);
  return model;
}

/**
 * A structured call after the agent's final answer (the last of `messages`), with the model bound for one
 * strategy ({@link constrainedModel}: the agent's tools bound so that a history holding tool blocks is accepted,
 * Bedrock B3, never chosen). Its request: the format's own prompt as a system message (as createReactAgent's extra
 * call does), the history, the answer as text (never blank: B8/B9, A9), and a closing user turn: never a prefill,
 * and it says what the constraint is. The function returned sends it with `followUp` after it, through `repair`,
 * and answers with the JSON as its text (a forced tool call's arguments, serialised; the rest of the message kept).
 */
export async function structuredCall(
  strategy: StructuredOutputStrategy,
  model: ModelDescription,
  format: OutputFormat,
  tools: readonly unknown[],
  messages: BaseMessage[],
  repair: (request: BaseMessage[]) => Promise<BaseMessage[]>,
  config?: RunnableConfig,
) {
  // The names of the agent's tools, in any of their forms (a tool, OpenAI's `function`, Bedrock's `toolSpec`).
  const name = formatNameOf(
    format,
    new Set((tools as Dict[]).flatMap((t) => [t, t?.function, t?.toolSpec].map((p) => (p as Dict)?.name))),
  );
  const runnable = await constrainedModel(strategy, model, format, tools, name, config);
  const last = messages.at(-1)!;
  const input = [
    ...(format.prompt?.trim() ? [new SystemMessage(format.prompt)] : []),
    ...messages.slice(0, -1),
    textOnlyAnswer(answerText(last), last.id),
    // Only the strategy's own text is built (the prompted one serializes the whole schema).
    new HumanMessage(
      strategy === "tool"
        ? `Give your final answer now by calling the \`${name}\` tool with it. Do not call any other tool.`
        : strategy === "native"
          ? "Give your final answer now, as the JSON value of the required response format. Do not call any tool."
          : `Give your final answer now. ${formatInstructions(format)}`,
    ),
  ];
  return async (followUp: BaseMessage[]) => {
    const answer = (await runnable.invoke(await repair([...input, ...followUp]), config)) as AIMessage;
    if (strategy !== "tool") return answer;
    // The forced call's arguments as the text (the answer's own text when it made none).
    return asText(answer, JSON.stringify(answer.tool_calls?.find((c) => c.name === name)?.args));
  };
}
