/**
 * `parseToolPairingError`: reads a provider's rejection of a request's history out of whatever a LangChain
 * chat model threw: the OpenAI SDK's `BadRequestError`, the AWS SDK's `ValidationException` (as
 * ChatBedrockConverse rethrows it), the Anthropic SDK's `BadRequestError`, Google errors, errors wrapped by
 * LangChain (`cause` chains), a plain `Error`, or a bare string.
 *
 * The texts are the profiles' (`REJECTION_TEXTS`, engine/profiles.ts): each rule's row says how its text is found
 * and read; nothing here knows a rule. Every text is found by a fixed anchor (`indexOf`), and ids and positions are
 * read with bounded, linear scanners next to it: no regular expression runs on the whole text (only on a path or a
 * window of a few hundred characters), and nothing nests quantifiers. A 1 MB error text costs a few `indexOf` passes.
 */
import { REJECTION_TEXTS } from "../engine";
import type { Provider, ProviderRejection, RejectingProvider } from "../types";
import { messageIndexAt, payloadPositions } from "../models/positions";
import { fieldsOf, isDict, nonEmptyString, type Dict } from "../values";

export interface ParseToolPairingErrorOptions {
  /**
   * The LangChain messages that were sent, in the order the model received them (system messages included).
   * With them, a position the provider names is mapped back to `messageIndex`.
   */
  messages?: readonly unknown[];
  /** Who was called, when known: decides texts several providers share and how positions map back. */
  provider?: Provider;
}

/** Longest quoted text read as an id (a bound on how far a closing quote is looked for); most ids read from one list. */
const MAX_QUOTED = 256;
const MAX_IDS = 1000;
/** How far from an anchor a marker it needs (`Ids:`, `Value at '`) is looked for. */
const NEAR = 300;

type Text = (typeof REJECTION_TEXTS)[number];

// --- bounded readers ---------------------------------------------------------------------------------------

/** Characters that end an id: white space and controls, `,'"` `` ` `` `()[]{}<>;\`. */
const NOT_ID = new Set([..."'\",`()[]{}<>;\\"].map((c) => c.charCodeAt(0)));

function skipSpaces(text: string, at: number) {
  while (text[at] === " " || text[at] === "\t") at++;
  return at;
}

/** One id at `at` (after spaces): a run of id characters (read whole: a cut id never matches), a final dot removed. */
function readId(text: string, at: number) {
  const start = skipSpaces(text, at);
  let end = start;
  for (let c = text.charCodeAt(end); c > 32 && !NOT_ID.has(c); c = text.charCodeAt(++end));
  let last = end;
  while (last > start && ".:".includes(text[last - 1])) last--;
  if (last > start) return { id: text.slice(start, last), end };
}

/** A list `a, b, c` at `at`; none when a position stands there (Qwen: `... response messages: message[532].role`). */
function readIdList(text: string, at: number) {
  const ids: string[] = [];
  let pos = skipSpaces(text, at);
  if (/^messages?\[/.test(text.slice(pos, pos + 9))) return ids;
  // Ids may end with a dot only at the end of the list: a dot followed by text ends it.
  for (let next = readId(text, pos); next && ids.length < MAX_IDS; next = readId(text, pos + 1)) {
    ids.push(next.id);
    pos = next.end;
    if (text[pos] !== ",") break;
  }
  return ids;
}

/** The text between `at` and the next `quote`, when it is short enough to be an id or a path (and not empty). */
function readQuoted(text: string, at: number, quote: string, max = MAX_QUOTED) {
  const end = text.indexOf(quote, at);
  return end <= at || end - at > max ? [] : [text.slice(at, end)];
}

const POSITION_PATTERN =
  /(?:messages?|input|contents)(?:\.?\[|\.)(\d{1,7})\]?(?:\.member)?(?:\.content(?:\.?\[|\.)(\d{1,5}))?/g;

/** Positions named in a bounded window around `at` (the pattern runs on at most a few hundred characters). */
const positionsNear = (text: string, at: number, length: number) =>
  [...text.slice(Math.max(0, at - 96), at + length + 256).matchAll(POSITION_PATTERN)].map(([, index, block]) => ({
    payloadIndex: +index,
    block: block ? +block : undefined,
  }));

/**
 * Ids of the top-level objects of a list like `[{'name': 'f', 'args': {'id': 3}, 'id': 'call_a'}, ...]` (JSON
 * or a Python repr), read from right after its `[`: only `id` keys of the list's own objects count, not ids inside
 * their arguments. A list of quoted strings (`['call_a', "call_b"]`) is a list of ids.
 */
function listedCallIds(text: string, at: number) {
  const ids = [];
  const limit = Math.min(text.length, at + 256 * 1024);
  let depth = 1;
  let key: string | undefined;
  let value = false;
  for (let pos = at; pos < limit && ids.length < MAX_IDS; pos++) {
    const c = text[pos];
    if (c === '"' || c === "'") {
      let end = pos + 1;
      while (end < limit && text[end] !== c) end += text[end] === "\\" ? 2 : 1;
      const quoted = text.slice(pos + 1, end);
      if (depth === 1 || (depth === 2 && value && key === "id")) ids.push(quoted);
      else if (depth === 2 && !value) key = quoted;
      value = false;
      pos = end;
    } else if (c === "[" || c === "{") {
      depth++;
      value = false;
    } else if ((c === "]" || c === "}") && --depth === 0) break;
    else if (c === ":" && depth === 2) value = true;
    else if (c === ",") [value, key] = [false, undefined];
  }
  return ids;
}

/** The ids a text names next to its anchor at `at`, read as its row says (`IdReader` in engine/profiles.ts). */
function readIds(row: Text, text: string, at: number, anchor: string) {
  let from = at + anchor.length;
  if (row.idsAfter) {
    const marker = text.indexOf(row.idsAfter, at);
    if (marker === -1 || marker - at > NEAR) return [];
    from = marker + row.idsAfter.length;
  }
  const quote = anchor.at(-1)!;
  if (row.ids === "item") {
    // The item is quoted in `Item '<id>'` before the anchor; the reasoning item it needs, if named, after it.
    const item = text.lastIndexOf("Item '", at);
    const before = item === -1 || at - item > MAX_QUOTED + 64 ? [] : readQuoted(text, item + 6, "'");
    return quote === "'" ? [...before, ...readQuoted(text, from, "'")] : before;
  }
  if (row.ids === "list") return readIdList(text, from);
  if (row.ids === "calls") return listedCallIds(text, from);
  if (row.ids === "quoted") return readQuoted(text, from, quote);
  const one = row.ids === "one" && readId(text, from)?.id;
  return one ? [one] : [];
}

/**
 * Request parameters that define the request rather than carry its history (OpenAI Chat and Responses names,
 * Bedrock's `toolConfig`): an error about one of them (`Invalid 'tools[0].function.name'`) is not fixed by any
 * change to the history, so it is no rejection, even where its wording matches one (O5's pattern sentence).
 */
const DEFINITION_PARAMS = new Set(
  "tools tool_choice functions function_call response_format text parallel_tool_calls toolConfig".split(" "),
);

/** Whether a parameter path (`tools[0].function.name`, `tools.0.name`) is rooted in a request definition. */
const namesDefinition = (path: string) => DEFINITION_PARAMS.has(/^[^[.]{0,64}/.exec(path)?.[0] ?? "");

/**
 * The first row of `REJECTION_TEXTS` one of whose anchors `text` holds (and its `within`, and its `path`), with
 * what it names; null for an error about a request definition, which no other row may claim.
 */
function matchText(text: string) {
  // A text that opens with a definition's path (Anthropic's `tools.0.name: ...`) is about no history.
  if (namesDefinition(text)) return null;
  for (const row of REJECTION_TEXTS) {
    if (row.within && !text.includes(row.within)) continue;
    for (const anchor of row.anchors) {
      const at = text.indexOf(anchor);
      if (at === -1) continue;
      if (row.path) {
        // The parameter path: quoted right after the anchor (found at `at` again), or after `pathAfter` close before
        // it (each ends on the quote).
        const marker = row.pathAfter ?? anchor;
        const open = text.lastIndexOf(marker, at);
        const [path] =
          open === -1 || at - open > NEAR ? [] : readQuoted(text, open + marker.length, marker.at(-1)!, 200);
        if (!path) continue;
        if (namesDefinition(path)) return null;
        if (!row.path.test(path)) continue;
      }
      const near = row.position === "none" ? [] : positionsNear(text, row.position === "start" ? 0 : at, anchor.length);
      const position = row.position === "last" ? near.at(-1) : near[0];
      return { row, at, text, toolCallIds: readIds(row, text, at, anchor), position };
    }
  }
}

// --- reading errors --------------------------------------------------------------------------------------------

/** The sender an error's shape reveals, independent of its text. */
function shapeProvider(node: Dict) {
  if (isDict(node.$metadata) || node.$fault !== undefined) return "bedrock";
  const body = fieldsOf(node.error);
  if (body.type === "error" && isDict(body.error)) return "anthropic";
  if ("param" in body) return body.param === "input" ? "openai-responses" : "openai";
}

/**
 * The rejection `error` describes, or undefined when it is not about the message history: rate limits,
 * context length, authentication, network errors, aborts and 5xx all return undefined.
 */
export function parseToolPairingError(error: unknown, options: ParseToolPairingErrorOptions = {}) {
  // A malformed error object (throwing getters, odd prototypes) is simply not recognised.
  try {
    let shape: RejectingProvider | undefined;
    let param: string | undefined;
    let found: ReturnType<typeof matchText>;
    // The cause chain, at most 8 deep (a cycle is read again, to no effect).
    for (let node = error, depth = 0; depth < 8 && node != null; depth++) {
      // The texts an error carries, most specific first (a provider's own message before an SDK's summary of it).
      let texts: unknown[] = [node];
      if (isDict(node)) {
        if (node.name === "AbortError" || node.name === "ModelAbortError" || node.code === "ABORT_ERR") return;
        const status = [
          node.status,
          node.statusCode,
          fieldsOf(node.$metadata).httpStatusCode,
          fieldsOf(node.response).status,
          node.code,
        ].find((value) => typeof value === "number" && value >= 100 && value < 600);
        // Any other status is about a request that was fine as far as its history goes.
        if (status && status !== 400 && status !== 422) return;
        shape ??= shapeProvider(node);
        const body = fieldsOf(node.error);
        param ??= nonEmptyString(node.param) ?? nonEmptyString(body.param);
        texts = [
          fieldsOf(body.error).message,
          body.message,
          fieldsOf(fieldsOf(fieldsOf(node.response).data).error).message,
          node.message,
          // LangChain's code for a 400 about tools (`INVALID_TOOL_RESULTS`): read last, after every text.
          node.lc_error_code,
        ];
      }
      for (const text of texts) if (found === undefined && typeof text === "string") found = matchText(text);
      node = isDict(node) ? node.cause : undefined;
    }
    // An error about a tool definition or another request parameter: no history change fixes it.
    if (!found || (param && namesDefinition(param))) return;

    const { row, at, text, toolCallIds } = found;
    const { kind, rule } = row;
    const provider = senderOf(row, shape, options.provider);
    const position = found.position ?? positionsNear(param ?? "", 0, 0)[0];
    // The text kept: at most 4,096 characters, around the anchor.
    const start = Math.max(0, Math.min(at - 256, text.length - 4096));
    const rejection: ProviderRejection = { provider, kind, rule, toolCallIds, text: text.slice(start, start + 4096) };
    if (!position) return rejection;
    rejection.payloadIndex = position.payloadIndex;
    if (!options.messages || provider === "langgraph" || provider === "unknown") return rejection;
    try {
      const messageIndex = messageIndexAt(
        payloadPositions(options.messages, provider),
        position.payloadIndex,
        position.block,
      );
      if (messageIndex !== undefined) rejection.messageIndex = messageIndex;
    } catch {
      // messages the payload model cannot read: no index
    }
    return rejection;
  } catch {
    return;
  }
}

/**
 * Who sent it. The error's shape (an AWS SDK error, the Anthropic or OpenAI SDK's body) is evidence; a text
 * only one provider sends is too; the caller's `provider` only decides texts several providers send (the
 * caller may be wrong: a thread repaired for OpenAI and sent to Bedrock is the case recovery exists for).
 */
function senderOf(row: Text, shape?: RejectingProvider, called?: Provider) {
  const fromText = row.provider;
  if (fromText === "langgraph" && !row.shared) return fromText;
  // The text tells Chat Completions from Responses better than anything else (ChatOpenAI switches itself).
  if (shape) return shape.startsWith("openai") && fromText.startsWith("openai") ? fromText : shape;
  return row.shared && called && called !== "strict" ? called : fromText;
}
