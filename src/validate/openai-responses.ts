/** OpenAI Responses API: rules R1, R2, R3, R5 on the `input` array. */
import { readingInput } from "../errors";
import { asArray, asString, isDict, type Dict, type PayloadViolation } from "./common";

const RESPONSES_CALL_ID_MAX = 64;

/**
 * Rules R1, R2, R3, R5 on a Responses API `input` (a string input has nothing to check). Calls stored
 * server-side through `previous_response_id` are not visible here: R2 assumes the input holds every call.
 */
export function validateOpenAIResponsesInput(input: unknown): PayloadViolation[] {
  return readingInput(() => responsesViolations(input), "validateOpenAIResponsesInput", "input");
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
    message: `Invalid '${path}': string too long. Expected a string with maximum length ${RESPONSES_CALL_ID_MAX}, but got a string with length ${callId.length} instead.`,
  });
}
