/**
 * `parseToolPairingError`: reads a provider's rejection of a request's history out of whatever a LangChain
 * chat model threw: the OpenAI SDK's `BadRequestError`, the AWS SDK's `ValidationException` (as
 * ChatBedrockConverse rethrows it), the Anthropic SDK's `BadRequestError`, Google errors, errors wrapped by
 * LangChain (`cause` chains), a plain `Error`, or a bare string.
 *
 * Every text is found by a fixed anchor (`indexOf`), and ids and positions are read with bounded, linear
 * scanners next to it: no regular expression runs on the whole text, and nothing nests quantifiers. A 1 MB
 * error text costs a few `indexOf` passes.
 */
import type { Provider, ProviderRejection, RejectingProvider, RejectionKind } from "../types";
import { messageIndexAt, payloadPositions, type WireFormat } from "../models/positions";
import type { Dict } from "../values";

export interface ParseToolPairingErrorOptions {
  /**
   * The LangChain messages that were sent, in the order the model received them (system messages included).
   * With them, a position the provider names is mapped back to `messageIndex`.
   */
  messages?: readonly unknown[];
  /** Who was called, when known: decides texts several providers share and how positions map back. */
  provider?: Provider;
}

/** Longest text kept in `ProviderRejection.text`. */
const MAX_KEPT_TEXT = 4096;
/** Longest quoted text read as an id or a path (a bound on how far a closing quote is looked for). */
const MAX_QUOTED = 256;
/** Most ids read from one list. */
const MAX_IDS = 1000;
/** How far from an anchor a position (`messages.2`, `input[95]`) is looked for. */
const POSITION_BEFORE = 96;
const POSITION_AFTER = 256;
/** How deep a `cause` chain is followed. */
const MAX_CAUSE_DEPTH = 8;

interface Found {
  shared?: boolean;
  /** The text is about the request's definitions (tools, response format), not its history: no rejection. */
  notHistory?: boolean;
  rule: string;
  kind: RejectionKind;
  provider: RejectingProvider;
  toolCallIds?: string[];
  position?: Position;
}

interface Position {
  payloadIndex: number;
  block?: number;
}

/** One provider text: found by any of its anchors, then read by `read` (undefined: not this rule after all). */
interface TextRule {
  rule: string;
  kind: RejectionKind;
  provider: RejectingProvider;
  anchors: string[];
  read?: (text: string, at: number, anchor: string) => Partial<Found> | undefined;
  /** Which position near the anchor names the payload entry. Default: the first. */
  position?: "first" | "last" | "none";
  /** Several providers send this text: the caller's `provider` decides when the error's shape does not. */
  shared?: boolean;
}

// --- bounded readers ---------------------------------------------------------------------------------------

const isIdChar = (code: number): boolean =>
  code > 32 &&
  code !== 44 /* , */ &&
  code !== 39 /* ' */ &&
  code !== 34 /* " */ &&
  code !== 96 /* ` */ &&
  code !== 40 &&
  code !== 41 /* ( ) */ &&
  code !== 91 &&
  code !== 93 /* [ ] */ &&
  code !== 123 &&
  code !== 125 /* { } */ &&
  code !== 60 &&
  code !== 62 /* < > */ &&
  code !== 59 /* ; */ &&
  code !== 92; /* \ */

function skipSpaces(text: string, at: number): number {
  while (at < text.length && (text.charCodeAt(at) === 32 || text.charCodeAt(at) === 9)) at++;
  return at;
}

/** One id at `at` (after spaces): a run of id characters, a sentence's final dot removed. */
function readId(text: string, at: number): { id: string; end: number } | undefined {
  const start = skipSpaces(text, at);
  let end = start;
  // Read whole, whatever its length (one pass; a cut id would never match its call).
  while (end < text.length && isIdChar(text.charCodeAt(end))) end++;
  let id = text.slice(start, end);
  while (id.endsWith(".") || id.endsWith(":")) id = id.slice(0, -1);
  return id === "" ? undefined : { id, end };
}

/** A list `a, b, c` at `at`. */
function readIdList(text: string, at: number): string[] {
  const ids: string[] = [];
  let pos = at;
  while (ids.length < MAX_IDS) {
    const next = readId(text, pos);
    if (!next) break;
    ids.push(next.id);
    pos = next.end;
    // Ids may end with a dot only at the end of the list: a dot followed by text ends it.
    if (text.charCodeAt(pos) !== 44) break;
    pos++;
  }
  return ids;
}

/** The text between `at` and the next `quote`, when it is short enough to be an id or a path. */
function readQuoted(text: string, at: number, quote: string, max = MAX_QUOTED): string | undefined {
  const end = text.indexOf(quote, at);
  if (end === -1 || end - at > max) return undefined;
  return text.slice(at, end);
}

const POSITION_PATTERN =
  /(?:messages|message|input|contents)(?:\.\[|\[|\.)(\d{1,7})\]?(?:\.member)?(?:\.content(?:\.\[|\[|\.)(\d{1,5}))?/g;

/** Positions named in a bounded window around `at` (the pattern runs on at most a few hundred characters). */
function positionsNear(text: string, at: number, length: number): Position[] {
  const from = Math.max(0, at - POSITION_BEFORE);
  const window = text.slice(from, Math.min(text.length, at + length + POSITION_AFTER));
  const found: Position[] = [];
  for (const match of window.matchAll(POSITION_PATTERN)) {
    const position: Position = { payloadIndex: Number(match[1]) };
    if (match[2] !== undefined) position.block = Number(match[2]);
    found.push(position);
  }
  return found;
}

function positionIn(text: string | undefined): Position | undefined {
  if (!text) return undefined;
  return positionsNear(text.slice(0, POSITION_AFTER), 0, 0)[0];
}

/**
 * Ids of the top-level objects of a list like `[{'name': 'f', 'args': {'id': 3}, 'id': 'call_a'}, ...]` (JSON
 * or a Python repr): only `id` keys of the list's own objects count, not ids inside their arguments. A list of
 * quoted strings (`['call_a', "call_b"]`) is a list of ids.
 */
function listedCallIds(text: string, at: number): string[] {
  let pos = at;
  const ids: string[] = [];
  const limit = Math.min(text.length, pos + 256 * 1024);
  let depth = 0;
  let lastKey: string | undefined;
  let expectValue = false;
  for (; pos < limit && ids.length < MAX_IDS; pos++) {
    const c = text[pos];
    if (c === '"' || c === "'") {
      let end = pos + 1;
      while (end < limit && text[end] !== c) end += text[end] === "\\" ? 2 : 1;
      const value = text.slice(pos + 1, end);
      if ((depth === 2 && expectValue && lastKey === "id") || depth === 1) ids.push(value);
      else if (depth === 2 && !expectValue) lastKey = value;
      expectValue = false;
      pos = end;
    } else if (c === "[" || c === "{") {
      depth++;
      expectValue = false;
    } else if (c === "]" || c === "}") {
      depth--;
      if (depth === 0) break;
    } else if (c === ":" && depth === 2) {
      expectValue = true;
    } else if (c === ",") {
      expectValue = false;
      lastKey = undefined;
    }
  }
  return ids;
}

// --- the texts of docs/provider-rules.md ---------------------------------------------------------------------

const optional = (id: string | undefined): string[] => (id ? [id] : []);

/** The id quoted in `Item '<id>'` right before `at` (the Responses item texts name the item first). */
function quotedItemBefore(text: string, at: number): string[] {
  const start = text.lastIndexOf("Item '", at);
  return start === -1 || at - start > MAX_QUOTED + 64 ? [] : optional(readQuoted(text, start + "Item '".length, "'"));
}

const idsAfter = (text: string, at: number, anchor: string) => ({ toolCallIds: readIdList(text, at + anchor.length) });
const idAfter = (text: string, at: number, anchor: string) => {
  const id = readId(text, at + anchor.length)?.id;
  return { toolCallIds: id ? [id] : [] };
};

/**
 * Request parameters that define the request rather than carry its history (OpenAI Chat and Responses names,
 * Bedrock's `toolConfig`): an error about one of them (`Invalid 'tools[0].function.name'`) is not fixed by any
 * change to the history, so it is no rejection, even where its wording matches one (O5's pattern sentence).
 */
const DEFINITION_PARAMS = new Set([
  "tools",
  "tool_choice",
  "functions",
  "function_call",
  "response_format",
  "text",
  "parallel_tool_calls",
  "toolConfig",
]);

/** Whether a parameter path (`tools[0].function.name`, `tools.0.name`) is rooted in a request definition. */
function namesDefinition(path: string): boolean {
  let end = 0;
  while (end < path.length && end < 64 && path[end] !== "[" && path[end] !== ".") end++;
  return DEFINITION_PARAMS.has(path.slice(0, end));
}

/** `Invalid 'path': ...` (OpenAI O4 / O5, Responses R3): which rule depends on the path. */
function readInvalidPath(text: string, at: number, anchor: string): Partial<Found> | undefined {
  const path = readQuoted(text, at + anchor.length, "'", 200);
  if (!path) return undefined;
  if (namesDefinition(path)) return { notHistory: true };
  if (/^messages\[\d{1,7}\]\.tool_calls\[\d{1,5}\]\.id$/.test(path))
    return { rule: "O4", kind: "invalid_id", provider: "openai" };
  if (/^messages\[\d{1,7}\]\.tool_calls\[\d{1,5}\]\.function\.name$/.test(path))
    return { rule: "O5", kind: "invalid_tool_name", provider: "openai" };
  if (/^input\[\d{1,7}\]\.call_id$/.test(path)) return { rule: "R3", kind: "invalid_id", provider: "openai-responses" };
  if (/^input\[\d{1,7}\]\.name$/.test(path))
    return { rule: "R3", kind: "invalid_tool_name", provider: "openai-responses" };
  return undefined;
}

/**
 * `Value at 'path' failed to satisfy constraint` (Bedrock B4): only a tool call's id or name. Other constraints
 * on paths inside a tool block (the length of a result's text, say) are not about ids: no diagnosis.
 */
function readConstraintPath(text: string, at: number): Partial<Found> | undefined {
  const from = Math.max(0, at - 300);
  const open = text.lastIndexOf("Value at '", at);
  if (open < from) return undefined;
  const path = readQuoted(text, open + "Value at '".length, "'", 200);
  if (!path) return undefined;
  if (/\.(toolUse|toolResult)\.toolUseId$/.test(path)) return { kind: "invalid_id" };
  if (/\.toolUse\.name$/.test(path)) return { kind: "invalid_tool_name" };
  return undefined;
}

const RULES: TextRule[] = [
  // OpenAI Chat Completions
  {
    rule: "O1",
    kind: "missing_results",
    provider: "openai",
    anchors: ["did not have response messages: "],
    read: (text, at, anchor) => {
      const start = skipSpaces(text, at + anchor.length);
      // Qwen names a position instead of ids: `... response messages: message[532].role`.
      if (text.startsWith("message[", start) || text.startsWith("messages[", start))
        return { toolCallIds: [], position: positionIn(text.slice(start, start + 64)) };
      return idsAfter(text, at, anchor);
    },
  },
  {
    rule: "O1",
    kind: "missing_results",
    provider: "openai",
    anchors: [
      "must be followed by tool messages responding to each 'tool_call_id'",
      "insufficient tool messages following tool_calls message",
    ],
  },
  // OpenAI spells it "preceeding"; compatible backends "preceding": the common prefix is "prece".
  { rule: "O2", kind: "unexpected_results", provider: "openai", anchors: ["must be a response to a prece"] },
  {
    rule: "O3",
    kind: "duplicate_results",
    provider: "openai",
    anchors: ["Duplicate value for 'tool_call_id' of '"],
    position: "last",
    read: (text, at, anchor) => {
      const id = readQuoted(text, at + anchor.length, "'");
      return { toolCallIds: id ? [id] : [] };
    },
  },
  { rule: "O4", kind: "invalid_id", provider: "openai", anchors: ["Invalid '"], read: readInvalidPath },
  // The same O5 text without its path (OpenAI call ids have no pattern, so a pattern error is about a name).
  {
    rule: "O5",
    kind: "invalid_tool_name",
    provider: "openai",
    anchors: ["Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'"],
  },
  // OpenAI Responses
  {
    rule: "R1",
    kind: "missing_results",
    provider: "openai-responses",
    anchors: ["No tool output found for function call ", "No tool output found for custom tool call "],
    read: idAfter,
  },
  {
    rule: "R2",
    kind: "unexpected_results",
    provider: "openai-responses",
    anchors: [
      "No tool call found for function call output with call_id ",
      "No tool call found for custom tool call output with call_id ",
    ],
    read: idAfter,
  },
  {
    rule: "R5",
    kind: "duplicate_ids",
    provider: "openai-responses",
    anchors: ["Duplicate item found with id "],
    read: idAfter,
  },
  {
    rule: "R6",
    kind: "reasoning_item_unpaired",
    provider: "openai-responses",
    anchors: ["was provided without its required 'reasoning' item: '"],
    position: "none",
    // The item, then the reasoning item it needs.
    read: (text, at, anchor) => ({
      toolCallIds: [...quotedItemBefore(text, at), ...optional(readQuoted(text, at + anchor.length, "'"))],
    }),
  },
  {
    rule: "R7",
    kind: "reasoning_item_unpaired",
    provider: "openai-responses",
    anchors: ["of type 'reasoning' was provided without its required following item"],
    position: "none",
    read: (text, at) => ({ toolCallIds: quotedItemBefore(text, at) }),
  },
  // Anthropic
  {
    rule: "A1",
    kind: "missing_results",
    provider: "anthropic",
    anchors: ["blocks immediately after: "],
    read: idsAfter,
  },
  {
    rule: "A2",
    kind: "unexpected_results",
    provider: "anthropic",
    anchors: [
      "unexpected `tool_use_id` found in `tool_result` blocks: ",
      "unexpected tool_use_id found in tool_result blocks: ",
    ],
    read: idsAfter,
  },
  {
    rule: "A3",
    kind: "results_not_first",
    provider: "anthropic",
    anchors: ["tool_result block(s) at the beginning of this message"],
  },
  {
    rule: "A4",
    kind: "duplicate_ids",
    provider: "anthropic",
    anchors: ["`tool_use` ids must be unique", "tool_use ids must be unique"],
  },
  {
    rule: "A5",
    kind: "duplicate_results",
    provider: "anthropic",
    anchors: ["Found multiple `tool_result` blocks with id: ", "Found multiple tool_result blocks with id: "],
    read: idAfter,
  },
  {
    rule: "A6",
    kind: "invalid_id",
    provider: "anthropic",
    anchors: ["String should match pattern '^[a-zA-Z0-9_-]+$'"],
  },
  {
    rule: "A8",
    kind: "must_end_with_user",
    provider: "anthropic",
    anchors: ["does not support assistant message prefill"],
    shared: true,
    read: (text) =>
      text.includes("The model returned the following errors") ? { rule: "B7", provider: "bedrock" } : {},
  },
  {
    rule: "B7",
    kind: "must_end_with_user",
    provider: "bedrock",
    anchors: ["requires the last turn in the conversation to be a user message"],
  },
  {
    rule: "A9",
    kind: "empty_content",
    provider: "anthropic",
    anchors: ["all messages must have non-empty content except for the optional final assistant message"],
  },
  {
    rule: "A9",
    kind: "blank_text",
    provider: "anthropic",
    anchors: ["text content blocks must contain non-whitespace text", "text content blocks must be non-empty"],
  },
  // B11 is the same text inside Bedrock's wrapper of model errors.
  {
    rule: "A10",
    kind: "thinking_block_required",
    provider: "anthropic",
    anchors: ["must start with a thinking block"],
    // The position opens the text, further from the anchor than positions are looked for.
    read: (text) => ({
      position: positionIn(text),
      ...(text.includes("The model returned the following errors")
        ? { rule: "B11", provider: "bedrock" as const }
        : {}),
    }),
  },
  // A14 (B12 through Bedrock): a thinking block without its signature, or with one that does not verify.
  {
    rule: "A14",
    kind: "unsigned_reasoning",
    provider: "anthropic",
    anchors: [
      ".thinking.signature: Field required",
      ".redacted_thinking.data: Field required",
      "Invalid `signature` in `thinking` block",
      "Invalid signature in thinking block",
    ],
    read: (text) =>
      text.includes("The model returned the following errors") ? { rule: "B12", provider: "bedrock" } : {},
  },
  {
    rule: "A13",
    kind: "server_tool_result_missing",
    provider: "anthropic",
    anchors: ["` tool use with id `"],
    read: (text, at, anchor) => {
      const id = readQuoted(text, at + anchor.length, "`");
      return text.indexOf("was found without a corresponding", at) === -1 ? undefined : { toolCallIds: id ? [id] : [] };
    },
  },
  {
    rule: "A12",
    kind: "unsupported_content_block",
    provider: "bedrock",
    anchors: ["Unsupported content block type: "],
    position: "none",
  },
  // Bedrock Converse
  {
    rule: "B1",
    kind: "missing_results",
    provider: "bedrock",
    anchors: ["Expected toolResult blocks at "],
    read: (text, at) => {
      const ids = text.indexOf("Ids:", at);
      return { toolCallIds: ids !== -1 && ids - at < 128 ? readIdList(text, ids + 4) : [] };
    },
  },
  {
    rule: "B2",
    kind: "unexpected_results",
    provider: "bedrock",
    anchors: ["exceeds the number of toolUse blocks of previous turn"],
  },
  {
    rule: "B3",
    kind: "tool_config_missing",
    provider: "bedrock",
    anchors: ["The toolConfig field must be defined when using toolUse and toolResult content blocks"],
  },
  {
    rule: "B4",
    kind: "invalid_id",
    provider: "bedrock",
    anchors: ["failed to satisfy constraint"],
    read: (text, at) => readConstraintPath(text, at),
  },
  {
    rule: "B5",
    kind: "must_start_with_user",
    provider: "bedrock",
    anchors: ["A conversation must start with a user message"],
  },
  {
    rule: "B6",
    kind: "roles_must_alternate",
    provider: "bedrock",
    anchors: ["A conversation must alternate between user and assistant roles"],
  },
  { rule: "B8", kind: "blank_text", provider: "bedrock", anchors: ["The text field in the ContentBlock object at "] },
  { rule: "B9", kind: "empty_content", provider: "bedrock", anchors: ["The content field in the Message object at "] },
  { rule: "B10", kind: "empty_content", provider: "bedrock", anchors: ["cannot be empty when status value is error"] },
  // Gemini
  {
    rule: "G1",
    kind: "misplaced_calls",
    provider: "gemini",
    anchors: ["function call turn comes immediately after a user turn or after a function response turn"],
  },
  {
    rule: "G2",
    kind: "unexpected_results",
    provider: "gemini",
    anchors: ["function response turn comes immediately after a function call turn"],
  },
  {
    rule: "G3",
    kind: "result_count_mismatch",
    provider: "gemini",
    anchors: ["number of function response parts is equal to the number of function call parts"],
  },
  {
    rule: "G5",
    kind: "must_end_with_user",
    provider: "gemini",
    anchors: ["single turn requests end with a user role or the role field is empty"],
  },
  {
    rule: "G6",
    kind: "missing_thought_signature",
    provider: "gemini",
    anchors: ["Function call is missing a thought_signature"],
    position: "none",
  },
  {
    rule: "O6",
    kind: "invalid_content_part",
    provider: "openai",
    anchors: ["Invalid type for 'messages[", "Supported values are: 'text'"],
  },
  {
    rule: "A11",
    kind: "misplaced_system_message",
    provider: "anthropic",
    anchors: ["a `system` message must directly follow", "system messages are not supported in `messages`"],
  },
  // LangGraph's own check (Python createReactAgent, older LangGraph.js): a JSON / repr list of the calls.
  {
    rule: "INVALID_CHAT_HISTORY",
    kind: "missing_results",
    provider: "langgraph",
    anchors: ["Found AIMessages with tool_calls that do not have a corresponding ToolMessage"],
    position: "none",
    // `... tool calls: [{...}]` (the calls) or `... tool 'id' values: ['a', "b"]` (their ids), JSON or a Python repr.
    read: (text, at, anchor) => {
      const list = text.indexOf("[", at + anchor.length);
      return { toolCallIds: list !== -1 && list - at < 300 ? listedCallIds(text, list) : [] };
    },
  },
];

function matchText(text: string): (Found & { at: number }) | undefined {
  for (const rule of RULES) {
    for (const anchor of rule.anchors) {
      const at = text.indexOf(anchor);
      if (at === -1) continue;
      const read = rule.read ? rule.read(text, at, anchor) : {};
      if (read === undefined) continue;
      const found: Found & { at: number } = {
        rule: rule.rule,
        kind: rule.kind,
        provider: rule.provider,
        shared: rule.shared,
        ...read,
        at,
      };
      if (found.notHistory) return found; // no other rule may claim it
      if (found.position === undefined && rule.position !== "none") {
        const near = positionsNear(text, at, anchor.length);
        found.position = rule.position === "last" ? near[near.length - 1] : near[0];
      }
      return found;
    }
  }
  return undefined;
}

// --- reading errors --------------------------------------------------------------------------------------------

const isObject = (v: unknown): v is Dict => typeof v === "object" && v !== null;
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const pick = (v: unknown, ...keys: string[]): unknown => {
  let current = v;
  for (const key of keys) current = isObject(current) ? current[key] : undefined;
  return current;
};

/** HTTP statuses of a request that was fine as far as its history goes. */
const statusIsAboutHistory = (status: number): boolean => status === 400 || status === 422;

function statusOf(node: Dict): number | undefined {
  for (const value of [
    node.status,
    node.statusCode,
    pick(node, "$metadata", "httpStatusCode"),
    pick(node, "response", "status"),
    node.code,
  ]) {
    if (typeof value === "number" && value >= 100 && value < 600) return value;
  }
  return undefined;
}

/** The sender an error's shape reveals, independent of its text. */
function shapeProvider(node: Dict): RejectingProvider | undefined {
  if (isObject(node.$metadata) || node.$fault !== undefined) return "bedrock";
  const body = node.error;
  if (isObject(body) && body.type === "error" && isObject(body.error)) return "anthropic";
  if (isObject(body) && "param" in body) return body.param === "input" ? "openai-responses" : "openai";
  return undefined;
}

/** The texts an error carries, most specific first (a provider's own message before an SDK's summary of it). */
function textsOf(node: unknown): string[] {
  if (typeof node === "string") return [node];
  if (!isObject(node)) return [];
  const texts: string[] = [];
  for (const value of [
    pick(node, "error", "error", "message"),
    pick(node, "error", "message"),
    pick(node, "response", "data", "error", "message"),
    node.message,
  ]) {
    const text = str(value);
    if (text !== undefined && !texts.includes(text)) texts.push(text);
  }
  return texts;
}

const isAbort = (node: Dict): boolean =>
  node.name === "AbortError" || node.name === "ModelAbortError" || node.code === "ABORT_ERR";

/**
 * The rejection `error` describes, or undefined when it is not about the message history: rate limits,
 * context length, authentication, network errors, aborts and 5xx all return undefined.
 */
export function parseToolPairingError(
  error: unknown,
  options: ParseToolPairingErrorOptions = {},
): ProviderRejection | undefined {
  try {
    return parse(error, options);
  } catch {
    // A malformed error object (throwing getters, odd prototypes) is simply not recognised.
    return undefined;
  }
}

function parse(error: unknown, options: ParseToolPairingErrorOptions): ProviderRejection | undefined {
  const seen = new Set<unknown>();
  let shape: RejectingProvider | undefined;
  let param: string | undefined;
  let found: (Found & { at: number }) | undefined;
  let foundIn = "";
  let node: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && node !== undefined && node !== null && !seen.has(node); depth++) {
    seen.add(node);
    if (isObject(node)) {
      if (isAbort(node)) return undefined;
      const status = statusOf(node);
      if (status !== undefined && !statusIsAboutHistory(status)) return undefined;
      shape ??= shapeProvider(node);
      param ??= str(node.param) ?? str(pick(node, "error", "param"));
    }
    if (!found) {
      for (const text of textsOf(node)) {
        found = matchText(text);
        if (found) {
          foundIn = text;
          break;
        }
      }
    }
    node = isObject(node) ? node.cause : undefined;
  }
  // An error about a tool definition or another request parameter: no history change fixes it.
  if (!found || found.notHistory || (param !== undefined && namesDefinition(param))) return undefined;

  const provider = senderOf(found, options.provider, shape);
  const position = found.position ?? positionIn(param);
  const rejection: ProviderRejection = {
    provider,
    kind: found.kind,
    rule: found.rule,
    toolCallIds: found.toolCallIds ?? [],
    text: keptText(foundIn, found.at),
  };
  if (position !== undefined) {
    rejection.payloadIndex = position.payloadIndex;
    const messageIndex = mapBack(options.messages, provider, position);
    if (messageIndex !== undefined) rejection.messageIndex = messageIndex;
  }
  return rejection;
}

/**
 * Who sent it. The error's shape (an AWS SDK error, the Anthropic or OpenAI SDK's body) is evidence; a text
 * only one provider sends is too; the caller's `provider` only decides texts several providers send (the
 * caller may be wrong: a thread repaired for OpenAI and sent to Bedrock is the case recovery exists for).
 */
function senderOf(found: Found, called: Provider | undefined, shape: RejectingProvider | undefined): RejectingProvider {
  const fromText = found.provider;
  if (fromText === "langgraph") return fromText;
  const openAI = (p: RejectingProvider) => p === "openai" || p === "openai-responses";
  // The text tells Chat Completions from Responses better than anything else (ChatOpenAI switches itself).
  if (shape !== undefined) return openAI(shape) && openAI(fromText) ? fromText : shape;
  if (found.shared && called !== undefined && called !== "strict") return called;
  return fromText;
}

function keptText(text: string, at: number): string {
  if (text.length <= MAX_KEPT_TEXT) return text;
  const start = Math.max(0, Math.min(at - 256, text.length - MAX_KEPT_TEXT));
  return text.slice(start, start + MAX_KEPT_TEXT);
}

const WIRE: Partial<Record<RejectingProvider, WireFormat>> = {
  openai: "openai",
  "openai-responses": "openai-responses",
  anthropic: "anthropic",
  bedrock: "bedrock",
  gemini: "gemini",
};

function mapBack(
  messages: readonly unknown[] | undefined,
  provider: RejectingProvider,
  position: Position,
): number | undefined {
  const format = WIRE[provider];
  if (!messages || !format) return undefined;
  try {
    return messageIndexAt(payloadPositions(messages, format), position.payloadIndex, position.block);
  } catch {
    return undefined;
  }
}
