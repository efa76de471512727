/**
 * What a provider stub was really sent, read from the request body the real client built (Bedrock Converse,
 * OpenAI Chat Completions, Anthropic Messages): the demos' model answers from it, and the demos print it.
 * Nothing here is scripted: an answer names the tool results the request carried, in its own words.
 */

type Dict = Record<string, unknown>;

const isDict = (value: unknown): value is Dict => typeof value === "object" && value !== null;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** The text of a content value: a string, or the text of its text blocks. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return list(content)
    .map((block) => (isDict(block) && typeof block.text === "string" ? block.text : ""))
    .join("");
}

export interface SentTurn {
  role: string;
  text: string;
  /** Calls the turn makes: id and tool name. */
  calls: { id: string; name: string }[];
  /** Tool results the turn carries: the call id answered and the result's text. */
  results: { id: string; text: string }[];
}

/** One turn per message of the request, in the three wire formats. */
export function sentTurns(request: unknown): SentTurn[] {
  const body = isDict(request) ? request : {};
  return list(body.messages).map((raw) => {
    const message = isDict(raw) ? raw : {};
    const turn: SentTurn = { role: String(message.role ?? "?"), text: "", calls: [], results: [] };
    if (typeof message.content === "string") turn.text = message.content;
    for (const block of list(message.content)) {
      if (!isDict(block)) continue;
      if (typeof block.text === "string" && block.type !== "tool_result") turn.text += block.text;
      const use = isDict(block.toolUse) ? block.toolUse : block.type === "tool_use" ? block : undefined;
      if (use) turn.calls.push({ id: String(use.toolUseId ?? use.id), name: String(use.name) });
      const result = isDict(block.toolResult) ? block.toolResult : block.type === "tool_result" ? block : undefined;
      if (result)
        turn.results.push({ id: String(result.toolUseId ?? result.tool_use_id), text: textOf(result.content) });
    }
    // OpenAI Chat: calls on the assistant message, each result a `tool` message of its own.
    for (const call of list(message.tool_calls))
      if (isDict(call) && isDict(call.function))
        turn.calls.push({ id: String(call.id), name: String(call.function.name) });
    if (message.role === "tool") {
      turn.results.push({ id: String(message.tool_call_id), text: textOf(message.content) });
      turn.text = "";
    }
    return turn;
  });
}

const quote = (text: string, max = 60) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return `"${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}"`;
};

/** The tool results a request carried, each with the name of the call it answers (from the same request). */
export function sentResults(request: unknown): { name: string; text: string }[] {
  const turns = sentTurns(request);
  const names = new Map(turns.flatMap((t) => t.calls.map((c) => [c.id, c.name] as const)));
  return turns.flatMap((t) => t.results.map((r) => ({ name: names.get(r.id) ?? r.id, text: r.text })));
}

/** The stub model's answer: what the request it received told it, the tool results and the user's last words. */
export function answerFromRequest(request: unknown): string {
  const turns = sentTurns(request);
  const lastUser = [...turns].reverse().find((t) => t.role === "user" && t.text !== "");
  const results = sentResults(request);
  const told = results.map((r) => `${r.name} returned ${quote(r.text)}`).join("; ");
  return (
    `(stub model, from the request it received) ${results.length} tool result${results.length === 1 ? "" : "s"}` +
    `${told ? `: ${told}` : ""}. Last user message: ${quote(lastUser?.text ?? "")}`
  );
}

/** The request as sent, one line per message: role, text, calls and results. */
export function describeSent(request: unknown): string[] {
  return sentTurns(request).map((turn, i) => {
    const parts = [
      turn.text && quote(turn.text, 50),
      turn.calls.length > 0 && `calls ${turn.calls.map((c) => `${c.name}(${c.id})`).join(", ")}`,
      turn.results.length > 0 && `results ${turn.results.map((r) => `${r.id}: ${quote(r.text, 40)}`).join(", ")}`,
    ].filter(Boolean);
    return `${String(i).padStart(2)} ${turn.role.padEnd(9)} ${parts.join("  ")}`;
  });
}
