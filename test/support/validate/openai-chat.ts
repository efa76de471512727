/** OpenAI Chat Completions: rules O1-O6 on the `messages` array. */
import { readingInput } from "./common";
import { asArray, asString, isDict, missingFrom, NAME_PATTERN, type Dict, type PayloadViolation } from "./common";

const OPENAI_ID_MAX = 40;

function openAIToolCalls(message: Dict): Dict[] {
  return asArray(message.tool_calls).filter(isDict);
}

/** Content part types each role accepts (O6). */
const PART_TYPES: Record<string, readonly string[]> = {
  assistant: ["text", "refusal"],
  user: ["text", "image_url", "input_audio", "file"],
  tool: ["text"],
  system: ["text"],
  developer: ["text"],
};

/** O6: content parts are objects of a type the role accepts (a bare string, or an Anthropic block, is refused). */
function checkOpenAIContentParts(message: Dict, index: number, out: PayloadViolation[]): void {
  if (!Array.isArray(message.content)) return;
  const allowed = PART_TYPES[asString(message.role) ?? ""];
  if (!allowed) return;
  message.content.forEach((part, position) => {
    const path = `messages[${index}].content[${position}]`;
    if (!isDict(part)) {
      out.push({
        rule: "O6",
        path,
        payloadIndex: index,
        message: `Invalid type for '${path}': expected an object, but got a ${typeof part} instead.`,
      });
    } else if (!allowed.includes(asString(part.type) ?? "")) {
      const supported = allowed.map((t) => `'${t}'`).join(allowed.length === 2 ? " and " : ", ");
      out.push({
        rule: "O6",
        path: `${path}.type`,
        payloadIndex: index,
        message: `Invalid value: '${String(part.type)}'. Supported values are: ${supported}.`,
      });
    }
  });
}

/** Rules O1-O6 on a Chat Completions `messages` array. */
export function validateOpenAIChatMessages(messages: unknown): PayloadViolation[] {
  return readingInput(() => chatViolations(messages), "validateOpenAIChatMessages", "messages");
}

function chatViolations(messages: unknown): PayloadViolation[] {
  const list = asArray(messages);
  const violations: PayloadViolation[] = [];
  const answeredAt = new Map<string, number>();

  list.forEach((message, index) => {
    if (!isDict(message)) return;
    checkOpenAIContentParts(message, index, violations);
    if (message.role === "assistant") {
      checkOpenAIToolCallShapes(message, index, violations);
      checkOpenAIAnswered(list, message, index, violations);
    } else if (message.role === "tool") {
      checkOpenAIToolMessage(list, message, index, answeredAt, violations);
    }
  });
  return violations;
}

function checkOpenAIToolCallShapes(message: Dict, index: number, out: PayloadViolation[]): void {
  openAIToolCalls(message).forEach((call, position) => {
    const id = asString(call.id);
    if (id !== undefined && id.length > OPENAI_ID_MAX) {
      const path = `messages[${index}].tool_calls[${position}].id`;
      out.push({
        rule: "O4",
        path,
        payloadIndex: index,
        message:
          `Invalid '${path}': string too long. Expected a string with maximum length ${OPENAI_ID_MAX}, but ` +
          `got a string with length ${id.length} instead.`,
      });
    }
    const name = isDict(call.function) ? asString(call.function.name) : undefined;
    if (name === undefined || !NAME_PATTERN.test(name)) {
      const path = `messages[${index}].tool_calls[${position}].function.name`;
      out.push({
        rule: "O5",
        path,
        payloadIndex: index,
        message: `Invalid '${path}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
      });
    }
  });
}

/** O1: every call id answered by the run of tool messages that directly follows the assistant message. */
function checkOpenAIAnswered(list: unknown[], message: Dict, index: number, out: PayloadViolation[]): void {
  const ids = openAIToolCalls(message)
    .map((call) => asString(call.id))
    .filter((id): id is string => id !== undefined);
  if (ids.length === 0) return;
  const answered = new Set<string>();
  for (let next = index + 1; next < list.length; next++) {
    const following = list[next];
    if (!isDict(following) || following.role !== "tool") break;
    const id = asString(following.tool_call_id);
    if (id !== undefined) answered.add(id);
  }
  const missing = missingFrom(ids, answered);
  if (missing.length > 0) {
    out.push({
      rule: "O1",
      path: `messages[${index}]`,
      payloadIndex: index,
      toolCallIds: missing,
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
        "'tool_call_id'. The following tool_call_ids did not have response messages: " +
        `${missing.join(", ")}`,
    });
  }
}

/** The assistant message a tool message answers: the one right before its run of tool messages. */
function owningAssistant(list: unknown[], index: number): Dict | undefined {
  for (let previous = index - 1; previous >= 0; previous--) {
    const candidate = list[previous];
    if (isDict(candidate) && candidate.role === "tool") continue;
    return isDict(candidate) && candidate.role === "assistant" ? candidate : undefined;
  }
  return undefined;
}

function checkOpenAIToolMessage(
  list: unknown[],
  message: Dict,
  index: number,
  answeredAt: Map<string, number>,
  out: PayloadViolation[],
): void {
  const id = asString(message.tool_call_id);
  const owner = owningAssistant(list, index);
  const ownerIds = owner ? openAIToolCalls(owner).map((call) => asString(call.id)) : [];
  if (id === undefined || !ownerIds.includes(id)) {
    out.push({
      rule: "O2",
      path: `messages[${index}]`,
      payloadIndex: index,
      message:
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    });
  }
  if (id === undefined) return;
  const earlier = answeredAt.get(id);
  if (earlier !== undefined) {
    out.push({
      rule: "O3",
      path: `messages[${index}]`,
      payloadIndex: index,
      toolCallIds: [id],
      message: `Invalid parameter: Duplicate value for 'tool_call_id' of '${id}', in messages[${earlier}] and messages[${index}].`,
    });
  } else {
    answeredAt.set(id, index);
  }
}
