/** OpenAI Responses API: rules R1, R2, R3, R5, R6, R7 on the `input` array. */
import { readingInput } from "./common";
import { asArray, asString, isDict, validationOptions, type Dict, type PayloadViolation } from "./common";

const RESPONSES_CALL_ID_MAX = 64;

export interface OpenAIResponsesValidationOptions {
  /**
   * The `output` arrays of the responses the server stored (what it knows of the items it returned): with
   * them, R6 (an item that followed a reasoning item is sent with it) and the id match of R7 (a reasoning item
   * is followed by the very item that followed it) are checked. Without them R7 only checks that an output
   * item follows each reasoning item.
   */
  storedOutputs?: unknown[];
}

/**
 * Rules R1, R2, R3, R5, R6, R7 on a Responses API `input` (a string input has nothing to check). Calls stored
 * server-side through `previous_response_id` are not visible here: R2 assumes the input holds every call.
 */
export function validateOpenAIResponsesInput(
  input: unknown,
  options?: OpenAIResponsesValidationOptions,
): PayloadViolation[] {
  const fn = "validateOpenAIResponsesInput";
  const checked = validationOptions(options, fn, {
    storedOutputs: [Array.isArray, "an array of response output arrays"],
  });
  return readingInput(
    () => {
      const stored = reasoningLinks(asArray(checked.storedOutputs));
      return [...responsesViolations(input), ...reasoningViolations(asArray(input), stored)];
    },
    fn,
    "input",
  );
}

/** What the server knows of its responses: the item after each reasoning item, the reasoning item before each item. */
interface ReasoningLinks {
  followerOf: Map<string, string | undefined>;
  reasoningOf: Map<string, string>;
}

function reasoningLinks(outputs: unknown[]): ReasoningLinks {
  const links: ReasoningLinks = { followerOf: new Map(), reasoningOf: new Map() };
  for (const output of outputs) {
    let reasoning: string | undefined;
    const items = asArray(output);
    items.forEach((item, index) => {
      if (!isDict(item)) return;
      const id = asString(item.id);
      if (item.type === "reasoning") {
        reasoning = id;
        const next = items[index + 1];
        if (id !== undefined) links.followerOf.set(id, isDict(next) ? asString(next.id) : undefined);
      } else if (id !== undefined && reasoning !== undefined) links.reasoningOf.set(id, reasoning);
    });
  }
  return links;
}

/** Items a response outputs (what may follow a reasoning item); input messages and tool outputs are not. */
function isOutputItem(item: unknown): boolean {
  if (!isDict(item)) return false;
  const type = asString(item.type) ?? "message"; // an easy input message has no type
  if (type === "message") return item.role === "assistant";
  return type !== "reasoning" && !type.endsWith("_output");
}

/** R6 and R7. */
function reasoningViolations(items: unknown[], stored: ReasoningLinks): PayloadViolation[] {
  const out: PayloadViolation[] = [];
  const sentReasoning = new Set<string>();
  items.forEach((item, index) => {
    if (!isDict(item)) return;
    const id = asString(item.id);
    if (item.type === "reasoning") {
      if (id !== undefined) sentReasoning.add(id);
      const next = items[index + 1];
      const expected = id !== undefined ? stored.followerOf.get(id) : undefined;
      const nextId = isDict(next) ? asString(next.id) : undefined;
      if (!isOutputItem(next) || (expected !== undefined && nextId !== expected)) {
        out.push({
          rule: "R7",
          path: `input[${index}]`,
          payloadIndex: index,
          ...(id !== undefined ? { toolCallIds: [id] } : {}),
          message: `Item '${id ?? ""}' of type 'reasoning' was provided without its required following item.`,
        });
      }
      return;
    }
    const reasoning = id !== undefined ? stored.reasoningOf.get(id) : undefined;
    if (id !== undefined && reasoning !== undefined && !sentReasoning.has(reasoning)) {
      out.push({
        rule: "R6",
        path: `input[${index}]`,
        payloadIndex: index,
        toolCallIds: [id, reasoning],
        message: `Item '${id}' of type '${String(item.type)}' was provided without its required 'reasoning' item: '${reasoning}'.`,
      });
    }
  });
  return out;
}

function responsesViolations(input: unknown): PayloadViolation[] {
  const items = asArray(input);
  const violations: PayloadViolation[] = [];
  const outputIds = new Set<string>();
  for (const item of items) {
    if (isDict(item) && item.type === "function_call_output") {
      const callId = asString(item.call_id);
      if (callId !== undefined) outputIds.add(callId);
    }
  }
  const callIdsSoFar = new Set<string>();
  const itemIdsSoFar = new Set<string>();

  items.forEach((item, index) => {
    if (!isDict(item)) return;
    checkResponsesItemId(item, index, itemIdsSoFar, violations);
    const callId = asString(item.call_id);
    if (item.type === "function_call" || item.type === "function_call_output") {
      checkResponsesCallIdLength(callId, index, violations);
    }
    if (item.type === "function_call" && callId !== undefined) {
      callIdsSoFar.add(callId);
      if (!outputIds.has(callId)) {
        violations.push({
          rule: "R1",
          path: `input[${index}]`,
          payloadIndex: index,
          toolCallIds: [callId],
          message: `No tool output found for function call ${callId}.`,
        });
      }
    }
    if (item.type === "function_call_output" && (callId === undefined || !callIdsSoFar.has(callId))) {
      violations.push({
        rule: "R2",
        path: `input[${index}]`,
        payloadIndex: index,
        ...(callId !== undefined ? { toolCallIds: [callId] } : {}),
        message: `No tool call found for function call output with call_id ${callId ?? ""}.`,
      });
    }
  });
  return violations;
}

function checkResponsesItemId(item: Dict, index: number, seen: Set<string>, out: PayloadViolation[]): void {
  const id = asString(item.id);
  if (id === undefined) return;
  if (seen.has(id)) {
    out.push({
      rule: "R5",
      payloadIndex: index,
      toolCallIds: [id],
      message: `Duplicate item found with id ${id}. Remove duplicate items from your input and try again.`,
    });
  }
  seen.add(id);
}

function checkResponsesCallIdLength(callId: string | undefined, index: number, out: PayloadViolation[]): void {
  if (callId === undefined || callId.length <= RESPONSES_CALL_ID_MAX) return;
  const path = `input[${index}].call_id`;
  out.push({
    rule: "R3",
    path,
    payloadIndex: index,
    message:
      `Invalid '${path}': string too long. Expected a string with maximum length ` +
      `${RESPONSES_CALL_ID_MAX}, but got a string with length ${callId.length} instead.`,
  });
}
