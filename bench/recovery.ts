/**
 * Recovery benchmarks: `parseToolPairingError` on the texts the stubs answer with (the validators' own
 * messages, in each SDK's error shape), on 1 MB texts (ids at the start, the text buried at the end, no
 * match at all), with the position mapped back through a long history; and one forced repair.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { forceRepairToolCalls } from "../src/recovery/force-repair";
import { parseToolPairingError } from "../src/recovery/parse-error";
import {
  validateAnthropicMessages,
  validateBedrockConverse,
  validateOpenAIChatMessages,
  validateOpenAIResponsesInput,
} from "../test/support/validate";
import { compare, fmt } from "./harness";

const first = (violations: { message: string }[]) => violations[0].message;

/** The messages the stubs answer with, made by the same validators. */
function stubTexts(): Record<string, string> {
  const use = (id: string) => ({ toolUse: { toolUseId: id, name: "f", input: {} } });
  return {
    "Bedrock B1": first(
      validateBedrockConverse({
        messages: [
          { role: "user", content: [{ text: "q" }] },
          { role: "assistant", content: [use("tooluse_a"), use("tooluse_b")] },
          { role: "user", content: [{ text: "x" }] },
        ],
        toolConfig: { tools: [{}] },
      }),
    ),
    "OpenAI O1": first(
      validateOpenAIChatMessages([
        { role: "user", content: "q" },
        { role: "assistant", tool_calls: [{ id: "call_a", function: { name: "f" } }] },
        { role: "user", content: "x" },
      ]),
    ),
    "Anthropic A1": first(
      validateAnthropicMessages([
        { role: "user", content: "q" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_a", name: "f", input: {} }] },
        { role: "user", content: "x" },
      ]),
    ),
    "Responses R2": first(
      validateOpenAIResponsesInput([
        { role: "user", content: "q" },
        { type: "function_call_output", call_id: "call_x", output: "r" },
      ]),
    ),
  };
}

/** Each text in the shape its SDK throws it. */
function asThrown(name: string, text: string): unknown {
  if (name.startsWith("Bedrock"))
    return Object.assign(new Error(text), {
      name: "ValidationException",
      $fault: "client",
      $metadata: { httpStatusCode: 400 },
    });
  if (name.startsWith("Anthropic")) {
    const body = { type: "error", error: { type: "invalid_request_error", message: text } };
    return Object.assign(new Error(`400 ${JSON.stringify(body)}`), { status: 400, error: body });
  }
  return Object.assign(new Error(`400 ${text}`), {
    status: 400,
    error: { message: text, type: "invalid_request_error", param: "messages", code: null },
  });
}

/** 1,000 messages: question, call, result, answer. */
function longHistory(): BaseMessage[] {
  const out: BaseMessage[] = [];
  for (let i = 0; i < 250; i++) {
    out.push(new HumanMessage(`question ${i}`));
    out.push(new AIMessage({ content: "", tool_calls: [{ id: `tooluse_${i}`, name: "f", args: {} }] }));
    out.push(new ToolMessage({ content: `result ${i}`, tool_call_id: `tooluse_${i}` }));
    out.push(new AIMessage(`answer ${i}`));
  }
  return out;
}

export function runRecoveryBench(): string[] {
  const lines: string[] = [];
  lines.push("## Recovery: parseToolPairingError");
  lines.push("");
  lines.push("The stubs' texts in each SDK's error shape; 1 MB texts; a position mapped back through 1,000 messages.");
  lines.push("");
  lines.push("| input | chars | parse | ids read |");
  lines.push("|---|---:|---:|---:|");
  const megabyte = 1_000_000;
  const inputs: [string, unknown, { messages?: BaseMessage[] }?][] = Object.entries(stubTexts()).map(([name, text]) => [
    name,
    asThrown(name, text),
  ]);
  inputs.push([
    "1 MB: an id list at the start",
    new Error(
      `Expected toolResult blocks at messages.2.content for the following Ids: ${"tooluse_x, ".repeat(megabyte / 11)}`,
    ),
  ]);
  inputs.push([
    "1 MB: the text at the end",
    new Error(`${"x".repeat(megabyte)} No tool output found for function call call_late.`),
  ]);
  inputs.push(["1 MB: no history text", new Error("y".repeat(megabyte))]);
  const history = longHistory();
  inputs.push([
    "B1 mapped back through 1,000 messages",
    asThrown("Bedrock", "Expected toolResult blocks at messages.400.content for the following Ids: tooluse_199"),
    { messages: history },
  ]);
  const timings = compare(
    inputs.map(([name, error, options]) => ({ name, fn: () => parseToolPairingError(error, options) })),
    { rounds: 9, targetMs: 10 },
  );
  inputs.forEach(([name, error, options], i) => {
    const parsed = parseToolPairingError(error, options);
    const chars = (error as Error).message.length;
    lines.push(
      `| ${name} | ${chars.toLocaleString("en-US")} | ${fmt(timings[i].nsPerCall)} | ${parsed?.toolCallIds.length ?? "-"} |`,
    );
  });
  lines.push("");
  lines.push("## Recovery: forceRepairToolCalls (1,000 messages, one call named)");
  lines.push("");
  const rejection = parseToolPairingError(
    asThrown("Bedrock", "Expected toolResult blocks at messages.400.content for the following Ids: tooluse_199"),
    { messages: history },
  )!;
  const [force] = compare([{ name: "force", fn: () => forceRepairToolCalls(history, rejection) }], {
    rounds: 9,
    targetMs: 20,
  });
  lines.push("| messages | forceRepairToolCalls | repairs |");
  lines.push("|---:|---:|---:|");
  lines.push(`| 1,000 | ${fmt(force.nsPerCall)} | ${forceRepairToolCalls(history, rejection).repairs.length} |`);
  return lines;
}
