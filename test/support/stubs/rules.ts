/**
 * Rules the engine does not model, for `StubOptions.extraRule`: the stub answers with the provider's own
 * error text and the ids it names, as a real deployment would see it.
 */
import type { Rejection } from "./common";

type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Characters of text in a content value (a string, or blocks with `text`, nested once). */
function textLength(content: unknown): number {
  if (typeof content === "string") return content.length;
  return list(content).reduce<number>((sum, block) => {
    if (!isDict(block)) return sum;
    return (
      sum +
      (typeof block.text === "string" ? block.text.length : 0) +
      (block.content !== undefined ? textLength(block.content) : 0)
    );
  }, 0);
}

/**
 * A gateway in front of the provider that drops tool results longer than `maxChars` characters: the
 * provider then rejects the request with its missing-results text (O1, A1, B1) naming those calls. The
 * history is valid by every rule the engine knows; only a forced repair (the result replaced) gets through.
 */
export function droppedLargeResults(
  format: "openai" | "anthropic" | "bedrock",
  maxChars: number,
): (request: unknown) => Rejection | undefined {
  return (request) => {
    const messages = list(isDict(request) ? request.messages : undefined);
    switch (format) {
      case "openai": {
        const ids = messages.flatMap((m) =>
          isDict(m) && m.role === "tool" && typeof m.tool_call_id === "string" && textLength(m.content) > maxChars
            ? [m.tool_call_id]
            : [],
        );
        if (ids.length === 0) return undefined;
        return {
          rule: "O1",
          message:
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
            `'tool_call_id'. The following tool_call_ids did not have response messages: ${ids.join(", ")}`,
        };
      }
      case "anthropic":
        return firstTurnWithDropped(
          messages,
          maxChars,
          (block) =>
            block.type === "tool_result" && typeof block.tool_use_id === "string"
              ? { id: block.tool_use_id, content: block.content }
              : undefined,
          (index, ids) => ({
            rule: "A1",
            message:
              `messages.${index - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately ` +
              `after: ${ids.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` ` +
              "block in the next message.",
          }),
        );
      case "bedrock":
        return firstTurnWithDropped(
          messages,
          maxChars,
          (block) => {
            const result = isDict(block.toolResult) ? block.toolResult : undefined;
            return result && typeof result.toolUseId === "string"
              ? { id: result.toolUseId, content: result.content }
              : undefined;
          },
          (index, ids) => ({
            rule: "B1",
            message: `Expected toolResult blocks at messages.${index}.content for the following Ids: ${ids.join(", ")}`,
          }),
        );
    }
  };
}

/** The first user turn holding dropped results, reported at that turn's index. */
function firstTurnWithDropped(
  messages: unknown[],
  maxChars: number,
  resultOf: (block: Dict) => { id: string; content: unknown } | undefined,
  reject: (index: number, ids: string[]) => Rejection,
): Rejection | undefined {
  for (let index = 0; index < messages.length; index++) {
    const m = messages[index];
    if (!isDict(m) || m.role !== "user") continue;
    const ids = list(m.content).flatMap((block) => {
      const result = isDict(block) ? resultOf(block) : undefined;
      return result && textLength(result.content) > maxChars ? [result.id] : [];
    });
    if (ids.length > 0) return reject(index, ids);
  }
  return undefined;
}
