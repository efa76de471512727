/**
 * fast-check arbitraries for histories: a valid-by-construction conversation (system prompt, user turns,
 * parallel tool calls answered in any order, final answers), then a list of corruptions that reproduce what
 * breaks real threads (aborted runs, interrupts answered with a new message, trims, duplicate ids, ...).
 */
import fc from "fast-check";
import {
  AIMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from "@langchain/core/messages";

export interface Exchange {
  calls: number;
  /** Seeds the order in which results come back. */
  order: number;
  text: boolean;
}

export interface Turn {
  exchanges: Exchange[];
  final: boolean;
}

export type Corruption =
  | { op: "dropResult"; at: number }
  | { op: "moveResult"; at: number; to: number }
  | { op: "insertHuman"; at: number }
  | { op: "orphanResult"; at: number }
  | { op: "dupResult"; at: number; same: boolean }
  | { op: "dupCallId"; at: number }
  | { op: "invalidCall"; at: number; raw: boolean }
  | { op: "badId"; at: number; long: boolean }
  | { op: "trimFront"; n: number }
  | { op: "truncate"; n: number }
  | { op: "emptyAI"; at: number }
  | { op: "blankBlock"; at: number }
  | { op: "anthropicBlocks"; at: number }
  | { op: "responsesOutput"; at: number }
  | { op: "rawKwargs"; at: number }
  | { op: "emptyResult"; at: number }
  /** A thread started on ChatAnthropic: a signed thinking block before the calls. */
  | { op: "thinking"; at: number; redacted: boolean }
  /**
   * An Anthropic server tool answered inline, or cut off before its result. @langchain/anthropic re-sends the
   * web search result but not the web fetch or code execution one (A13).
   */
  | { op: "serverTool"; at: number; answered: boolean; tool?: ServerToolName }
  /**
   * A stream cancelled before its signature: the message it left holds reasoning without signature and nothing after
   * it (no call was streamed yet): a `thinking` block (ChatAnthropic, A14) or a `reasoning` block (@langchain/aws, B12).
   */
  | { op: "unsignedThinking"; at: number; shape?: ReasoningShape }
  /**
   * Reasoning as @langchain/aws stores it before a call, `{ type: "reasoning", reasoning, signature }`: signed, or
   * signed with empty text (the adapter drops it: B11).
   */
  | { op: "reasoning"; at: number; kind: "signed" | "empty" }
  /** A replayed checkpoint: an assistant message and its results written again right after them (same ids). */
  | { op: "replay"; at: number }
  /** A system message inside the conversation (a reminder, a steering note). */
  | { op: "systemMid"; at: number }
  /** Content arrays written by LangChain Python: bare strings among the blocks. */
  | { op: "bareStrings"; at: number }
  /** A ChatMessage (free role) anywhere: adapters map its role differently (or throw). */
  | { op: "chatMessage"; at: number; role: string }
  /** An assistant's calls mirrored as content blocks of one format (a thread from another provider). */
  | { op: "callBlocks"; at: number; format: "tool_use" | "tool_call" | "input_json_delta" | "toolUse" };

export type ServerToolName = "web_search" | "web_fetch" | "code_execution";

/**
 * Reasoning the client stored on every turn's first assistant message (a model with thinking on): Anthropic's
 * signed `thinking` block, or @langchain/aws's signed `reasoning` block.
 */
export type ReasoningShape = "thinking" | "reasoning";

export interface HistoryPlan {
  system: boolean;
  reasoning?: ReasoningShape;
  /** The last turn ends on its tool results, not on an answer: the request an agent sends inside its tool loop. */
  openLoop?: boolean;
  turns: Turn[];
  corruptions: Corruption[];
}

const exchangeArb: fc.Arbitrary<Exchange> = fc.record({
  calls: fc.integer({ min: 1, max: 3 }),
  order: fc.nat(5),
  text: fc.boolean(),
});

const turnArb: fc.Arbitrary<Turn> = fc.record({
  exchanges: fc.array(exchangeArb, { maxLength: 3 }),
  final: fc.boolean(),
});

const pos = fc.nat(200);

export const corruptionArb: fc.Arbitrary<Corruption> = fc.oneof(
  fc.record({ op: fc.constant("dropResult" as const), at: pos }),
  fc.record({ op: fc.constant("moveResult" as const), at: pos, to: pos }),
  fc.record({ op: fc.constant("insertHuman" as const), at: pos }),
  fc.record({ op: fc.constant("orphanResult" as const), at: pos }),
  fc.record({ op: fc.constant("dupResult" as const), at: pos, same: fc.boolean() }),
  fc.record({ op: fc.constant("dupCallId" as const), at: pos }),
  fc.record({ op: fc.constant("invalidCall" as const), at: pos, raw: fc.boolean() }),
  fc.record({ op: fc.constant("badId" as const), at: pos, long: fc.boolean() }),
  fc.record({ op: fc.constant("trimFront" as const), n: fc.nat(6) }),
  fc.record({ op: fc.constant("truncate" as const), n: fc.nat(4) }),
  fc.record({ op: fc.constant("emptyAI" as const), at: pos }),
  fc.record({ op: fc.constant("blankBlock" as const), at: pos }),
  fc.record({ op: fc.constant("anthropicBlocks" as const), at: pos }),
  fc.record({ op: fc.constant("responsesOutput" as const), at: pos }),
  fc.record({ op: fc.constant("rawKwargs" as const), at: pos }),
  fc.record({ op: fc.constant("emptyResult" as const), at: pos }),
  fc.record({ op: fc.constant("thinking" as const), at: pos, redacted: fc.boolean() }),
  fc.record({
    op: fc.constant("serverTool" as const),
    at: pos,
    answered: fc.boolean(),
    tool: fc.constantFrom<ServerToolName>("web_search", "web_fetch", "code_execution"),
  }),
  fc.record({
    op: fc.constant("unsignedThinking" as const),
    at: pos,
    shape: fc.constantFrom<ReasoningShape>("thinking", "reasoning"),
  }),
  fc.record({
    op: fc.constant("reasoning" as const),
    at: pos,
    kind: fc.constantFrom("signed" as const, "empty" as const),
  }),
  fc.record({ op: fc.constant("replay" as const), at: pos }),
  fc.record({ op: fc.constant("systemMid" as const), at: pos }),
  fc.record({ op: fc.constant("bareStrings" as const), at: pos }),
);

/** Roles a ChatMessage may carry: the ones each provider defines, their LangChain aliases, and an unknown one. */
export const CHAT_ROLES = [
  "user",
  "human",
  "assistant",
  "ai",
  "system",
  "developer",
  "tool",
  "function",
  "critic",
] as const;

/**
 * Every corruption, plus what the adapters disagree on: ChatMessages of any role and call blocks in every
 * format (not in {@link corruptionArb}: the real converters throw on some of them, which the positions model
 * does not try to follow).
 */
export const adapterCorruptionArb: fc.Arbitrary<Corruption> = fc.oneof(
  { weight: 4, arbitrary: corruptionArb },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("chatMessage" as const), at: pos, role: fc.constantFrom(...CHAT_ROLES) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("callBlocks" as const),
      at: pos,
      format: fc.constantFrom(
        "tool_use" as const,
        "tool_call" as const,
        "input_json_delta" as const,
        "toolUse" as const,
      ),
    }),
  },
);

export const validPlanArb: fc.Arbitrary<HistoryPlan> = fc.record({
  system: fc.boolean(),
  turns: fc.array(turnArb, { minLength: 1, maxLength: 5 }),
  corruptions: fc.constant([]),
});

export const brokenPlanArb: fc.Arbitrary<HistoryPlan> = fc.record({
  system: fc.boolean(),
  turns: fc.array(turnArb, { minLength: 1, maxLength: 5 }),
  corruptions: fc.array(corruptionArb, { minLength: 1, maxLength: 6 }),
});

type Dict = Record<string, unknown>;
const f = (m: BaseMessage) => m as unknown as Dict;

function permute<T>(items: T[], seed: number): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = (seed * 7 + i * 13) % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** The conversation a plan describes, before corruptions. Valid for every provider. */
export function buildValid(plan: HistoryPlan): BaseMessage[] {
  const out: BaseMessage[] = [];
  let n = 0;
  let t = 0;
  if (plan.system) out.push(new SystemMessage({ content: "You are a careful assistant.", id: "sys" }));
  for (const turn of plan.turns) {
    t++;
    out.push(new HumanMessage({ content: `user question ${t}`, id: `h${t}` }));
    turn.exchanges.forEach((ex, e) => {
      const ids = Array.from({ length: ex.calls }, () => `call_${++n}`);
      const text = ex.text ? `thinking about step ${n}` : "";
      // With thinking on, the model reasons at the start of each turn (the tool loop's opening message).
      const reasoning = e === 0 && plan.reasoning ? signedReasoning(plan.reasoning, `turn ${t}`) : undefined;
      out.push(
        new AIMessage({
          id: `ai${n}`,
          content: (reasoning ? [reasoning, ...(text ? [{ type: "text", text }] : [])] : text) as never,
          tool_calls: ids.map((id, k) => ({
            id,
            name: k % 2 ? "fetch_page" : "web_search",
            args: { q: id },
            type: "tool_call" as const,
          })),
        }),
      );
      for (const id of permute(ids, ex.order))
        out.push(new ToolMessage({ content: `output of ${id}`, tool_call_id: id, name: "web_search", id: `t_${id}` }));
    });
    // Every turn ends with an assistant answer so that the next user question alternates (inside the loop: not yet).
    if (plan.openLoop && t === plan.turns.length && turn.exchanges.length > 0) break;
    out.push(new AIMessage({ id: `final${t}`, content: `answer ${t}`, tool_calls: [] }));
  }
  return out;
}

/**
 * The plan as a Gemini 3 thread stores it: one call per step (@langchain/google-genai sends each result as its
 * own turn, so parallel calls break G3) and the model's thought signature on each step's call, keyed by call id
 * in `additional_kwargs` as the client keeps it.
 */
export function buildValidGemini(plan: HistoryPlan): BaseMessage[] {
  const single: HistoryPlan = {
    ...plan,
    turns: plan.turns.map((turn) => ({
      ...turn,
      exchanges: turn.exchanges.map((ex) => ({ ...ex, calls: Math.min(ex.calls, 1) })),
    })),
  };
  return buildValid(single).map((m) => {
    const calls = AIMessage.isInstance(m) ? (m.tool_calls ?? []) : [];
    if (calls.length === 0) return m;
    const signatures = { [calls[0].id!]: `sig_${calls[0].id}` };
    return rebuildAI(m as AIMessage, {
      additional_kwargs: { ...m.additional_kwargs, __gemini_function_call_thought_signatures__: signatures },
    });
  });
}

/** A signed reasoning block as the client stores it. */
function signedReasoning(shape: ReasoningShape, about: string): Dict {
  return shape === "thinking"
    ? { type: "thinking", thinking: `private reasoning about ${about}`, signature: `sig_${about.replace(/\W/g, "_")}` }
    : {
        type: "reasoning",
        reasoning: `private reasoning about ${about}`,
        signature: `sig_${about.replace(/\W/g, "_")}`,
      };
}

/** A message's content as a list of blocks (a string becomes one text block). */
const blocksOf = (m: BaseMessage): unknown[] =>
  typeof m.content === "string"
    ? m.content
      ? [{ type: "text", text: m.content }]
      : []
    : Array.isArray(m.content)
      ? m.content
      : [];

/** Where a prepended reasoning block goes: after the reasoning the message already starts with. */
const reasoningEnd = (blocks: unknown[]) => {
  let k = 0;
  while (
    k < blocks.length &&
    ["thinking", "redacted_thinking", "reasoning", "reasoning_content"].includes(String((blocks[k] as Dict)?.type))
  )
    k++;
  return k;
};

/** What a server tool returns, in the block type its result has. */
function serverResult(tool: ServerToolName, id: string, serial: number): Dict {
  if (tool === "web_search")
    return {
      type: "web_search_tool_result",
      tool_use_id: id,
      content: [{ type: "web_search_result", url: `https://example.com/${serial}`, title: `found ${serial}` }],
    };
  if (tool === "web_fetch")
    return {
      type: "web_fetch_tool_result",
      tool_use_id: id,
      content: {
        type: "web_fetch_result",
        url: `https://example.com/page${serial}`,
        content: { type: "document", source: { type: "text", media_type: "text/plain", data: `page text ${serial}` } },
      },
    };
  return {
    type: "code_execution_tool_result",
    tool_use_id: id,
    content: { type: "code_execution_result", stdout: `printed ${serial}`, stderr: "", return_code: 0 },
  };
}

const indexesOf = (h: BaseMessage[], pred: (m: BaseMessage) => boolean) => h.flatMap((m, i) => (pred(m) ? [i] : []));
const isTool = (m: BaseMessage) => ToolMessage.isInstance(m);
const isCaller = (m: BaseMessage) => AIMessage.isInstance(m) && ((m as AIMessage).tool_calls?.length ?? 0) > 0;
const pick = (list: number[], at: number) => (list.length ? list[at % list.length] : undefined);

function rebuildAI(m: AIMessage, fields: Dict): AIMessage {
  return new AIMessage({
    id: m.id,
    content: m.content,
    tool_calls: m.tool_calls ?? [],
    invalid_tool_calls: m.invalid_tool_calls ?? [],
    additional_kwargs: m.additional_kwargs,
    response_metadata: m.response_metadata,
    ...fields,
  } as never);
}

function renameCall(h: BaseMessage[], index: number, from: string, to: string): void {
  const m = h[index] as AIMessage;
  h[index] = rebuildAI(m, { tool_calls: m.tool_calls!.map((c) => (c.id === from ? { ...c, id: to } : c)) });
  for (let i = 0; i < h.length; i++) {
    const r = h[i];
    if (isTool(r) && (r as ToolMessage).tool_call_id === from && i > index)
      h[i] = new ToolMessage({ content: r.content, tool_call_id: to, name: r.name, id: r.id });
  }
}

export function applyCorruption(h: BaseMessage[], c: Corruption, serial: number): void {
  const tools = indexesOf(h, isTool);
  const callers = indexesOf(h, isCaller);
  switch (c.op) {
    case "dropResult": {
      const i = pick(tools, c.at);
      if (i !== undefined) h.splice(i, 1);
      return;
    }
    case "moveResult": {
      const i = pick(tools, c.at);
      if (i === undefined) return;
      const [m] = h.splice(i, 1);
      h.splice(c.to % (h.length + 1), 0, m);
      return;
    }
    case "insertHuman": {
      let at = c.at % (h.length + 1);
      // Not right after a cut stream's message: a user message after an assistant text inside a tool loop reads as
      // a new turn, which the engine cannot tell from a steer (left to recovery: docs/provider-rules.md, the open tool loop).
      if (at > 0 && String(h[at - 1].id).startsWith("cut")) at--;
      h.splice(at, 0, new HumanMessage({ content: `steering message ${serial}`, id: `steer${serial}` }));
      return;
    }
    case "orphanResult":
      h.splice(
        c.at % (h.length + 1),
        0,
        new ToolMessage({ content: `stray output ${serial}`, tool_call_id: `gone_${serial}`, id: `stray${serial}` }),
      );
      return;
    case "dupResult": {
      const i = pick(tools, c.at);
      if (i === undefined) return;
      const r = h[i] as ToolMessage;
      h.splice(
        i + 1,
        0,
        new ToolMessage({
          content: c.same ? r.content : `another output ${serial}`,
          tool_call_id: r.tool_call_id,
          id: `dup${serial}`,
        }),
      );
      return;
    }
    case "dupCallId": {
      if (callers.length < 2) return;
      const later = callers[1 + (c.at % (callers.length - 1))];
      const earlier = callers[c.at % callers.indexOf(later)];
      const from = (h[later] as AIMessage).tool_calls![0].id!;
      renameCall(h, later, from, (h[earlier] as AIMessage).tool_calls![0].id!);
      return;
    }
    case "invalidCall": {
      const i = pick(
        indexesOf(h, (m) => AIMessage.isInstance(m)),
        c.at,
      );
      if (i === undefined) return;
      const m = h[i] as AIMessage;
      const id = `call_bad${serial}`;
      const raw = { id, type: "function", function: { name: "web_search", arguments: "{broken" } };
      h[i] = rebuildAI(m, {
        invalid_tool_calls: [
          ...(m.invalid_tool_calls ?? []),
          { id, name: "web_search", args: "{broken", error: "Unexpected token", type: "invalid_tool_call" },
        ],
        ...(c.raw ? { additional_kwargs: { ...m.additional_kwargs, tool_calls: [raw] } } : {}),
      });
      return;
    }
    case "badId": {
      const i = pick(callers, c.at);
      if (i === undefined) return;
      const from = (h[i] as AIMessage).tool_calls![0].id!;
      renameCall(h, i, from, c.long ? `${from}_${"x".repeat(70)}` : `functions.${from}:0`);
      return;
    }
    case "trimFront":
      h.splice(h[0] && SystemMessage.isInstance(h[0]) ? 1 : 0, c.n);
      return;
    case "truncate":
      h.splice(Math.max(1, h.length - c.n), c.n);
      return;
    case "emptyAI":
      h.splice(c.at % (h.length + 1), 0, new AIMessage({ content: "", tool_calls: [], id: `empty${serial}` }));
      return;
    case "blankBlock": {
      const i = pick(
        indexesOf(h, (m) => AIMessage.isInstance(m)),
        c.at,
      );
      if (i === undefined) return;
      const m = h[i] as AIMessage;
      const text = typeof m.content === "string" ? m.content : "";
      h[i] = rebuildAI(m, { content: [{ type: "text", text: "  \n" }, ...(text ? [{ type: "text", text }] : [])] });
      return;
    }
    case "anthropicBlocks": {
      const i = pick(callers, c.at);
      if (i === undefined) return;
      const m = h[i] as AIMessage;
      const text = typeof m.content === "string" && m.content ? [{ type: "text", text: m.content }] : [];
      h[i] = rebuildAI(m, {
        content: [
          ...text,
          ...m.tool_calls!.map((tc) => ({ type: "tool_use", id: tc.id, name: tc.name, input: tc.args })),
        ],
      });
      return;
    }
    case "responsesOutput": {
      const i = pick(callers, c.at);
      if (i === undefined) return;
      const m = h[i] as AIMessage;
      h[i] = rebuildAI(m, {
        response_metadata: {
          ...m.response_metadata,
          output: m.tool_calls!.map((tc, k) => ({
            type: "function_call",
            id: `fc_${serial}_${k}`,
            call_id: tc.id,
            name: tc.name,
            arguments: JSON.stringify(tc.args),
            status: "completed",
          })),
        },
      });
      return;
    }
    case "rawKwargs": {
      const i = pick(callers, c.at);
      if (i === undefined) return;
      const m = h[i] as AIMessage;
      h[i] = rebuildAI(m, {
        additional_kwargs: {
          ...m.additional_kwargs,
          tool_calls: m.tool_calls!.map((tc) => ({
            id: tc.id,
            type: "function",
            function: { name: tc.name, arguments: JSON.stringify(tc.args) },
          })),
        },
      });
      return;
    }
    case "emptyResult": {
      const i = pick(tools, c.at);
      if (i === undefined) return;
      const r = h[i] as ToolMessage;
      h[i] = new ToolMessage({ content: "", tool_call_id: r.tool_call_id, name: r.name, id: r.id });
      return;
    }
    case "thinking": {
      const i = pick(callers, c.at);
      if (i === undefined) return;
      const m = h[i] as AIMessage;
      const text =
        typeof m.content === "string" && m.content
          ? [{ type: "text", text: m.content }]
          : Array.isArray(m.content)
            ? m.content
            : [];
      const block = c.redacted
        ? { type: "redacted_thinking", data: `redacted${serial}` }
        : { type: "thinking", thinking: `private reasoning ${serial}`, signature: `sig${serial}` };
      h[i] = rebuildAI(m, { content: [block, ...text] });
      return;
    }
    case "serverTool": {
      const i = pick(
        indexesOf(h, (m) => AIMessage.isInstance(m)),
        c.at,
      );
      if (i === undefined) return;
      const m = h[i] as AIMessage;
      const text =
        typeof m.content === "string" && m.content
          ? [{ type: "text", text: m.content }]
          : Array.isArray(m.content)
            ? m.content
            : [];
      const id = `srvtoolu_${serial}`;
      const tool = c.tool ?? "web_search";
      const input =
        tool === "web_search"
          ? { query: `search ${serial}` }
          : tool === "web_fetch"
            ? { url: `https://example.com/page${serial}` }
            : { code: `print(${serial})` };
      const use = { type: "server_tool_use", id, name: tool, input };
      // After the reasoning the message starts with: the model reasons first, then calls.
      const lead = reasoningEnd(text);
      const rest = [
        ...text.slice(0, lead),
        ...(c.answered ? [use, serverResult(tool, id, serial)] : []),
        ...text.slice(lead),
        ...(c.answered ? [] : [use]),
      ];
      h[i] = rebuildAI(m, { content: rest });
      return;
    }
    case "unsignedThinking": {
      // The message a cut stream left: thinking without its signature, and nothing after it (no call was streamed yet).
      const cut =
        c.shape === "reasoning"
          ? { type: "reasoning", reasoning: `reasoning cut off ${serial}`, index: 0 }
          : { type: "thinking", thinking: `reasoning cut off ${serial}`, index: 0 };
      // Where the model was answering a user message when the user cancelled (the retry follows it), or at the end.
      const at = pick([...indexesOf(h, (m) => HumanMessage.isInstance(m)).map((i) => i + 1), h.length], c.at);
      if (at !== undefined) h.splice(at, 0, new AIMessage({ content: [cut] as never, id: `cut${serial}` }));
      return;
    }
    case "reasoning": {
      const i = pick(callers, c.at);
      if (i === undefined) return;
      const m = h[i] as AIMessage;
      const blocks = blocksOf(m);
      const block =
        c.kind === "signed"
          ? signedReasoning("reasoning", `call ${serial}`)
          : { type: "reasoning", reasoning: "", signature: `sig_empty_${serial}` };
      h[i] = rebuildAI(m, { content: [block, ...blocks.slice(reasoningEnd(blocks))] });
      return;
    }
    case "replay": {
      const i = pick(callers, c.at);
      if (i === undefined) return;
      let end = i + 1;
      while (end < h.length && isTool(h[end])) end++;
      // The same messages again (a checkpoint replayed): new message ids, the same call ids and blocks.
      const copies = h.slice(i, end).map((m, k) =>
        AIMessage.isInstance(m)
          ? rebuildAI(m, { id: `replay${serial}_${k}` })
          : new ToolMessage({
              content: m.content,
              tool_call_id: (m as ToolMessage).tool_call_id,
              name: m.name,
              id: `replay${serial}_${k}`,
            }),
      );
      h.splice(end, 0, ...copies);
      return;
    }
    case "systemMid":
      h.splice(
        c.at % (h.length + 1),
        0,
        new SystemMessage({ content: `reminder ${serial}: stay on topic`, id: `sysmid${serial}` }),
      );
      return;
    case "bareStrings": {
      const i = pick(
        indexesOf(h, (m) => HumanMessage.isInstance(m) || ToolMessage.isInstance(m)),
        c.at,
      );
      if (i === undefined) return;
      const m = h[i];
      const text = typeof m.content === "string" ? m.content : "";
      const content = [text, { type: "text", text: `more ${serial}` }] as never;
      h[i] = ToolMessage.isInstance(m)
        ? new ToolMessage({ content, tool_call_id: m.tool_call_id, name: m.name, id: m.id })
        : new HumanMessage({ content, id: m.id });
      return;
    }
    case "chatMessage":
      h.splice(
        c.at % (h.length + 1),
        0,
        new ChatMessage({ role: c.role, content: `chat as ${c.role} ${serial}`, id: `chat${serial}` }),
      );
      return;
    case "callBlocks": {
      const i = pick(callers, c.at);
      if (i === undefined) return;
      const m = h[i] as AIMessage;
      const text =
        typeof m.content === "string" && m.content
          ? [{ type: "text", text: m.content }]
          : Array.isArray(m.content)
            ? m.content
            : [];
      const blocks = m.tool_calls!.map((tc, k) => {
        switch (c.format) {
          case "tool_use":
            return { type: "tool_use", id: tc.id, name: tc.name, input: tc.args };
          case "tool_call":
            return { type: "tool_call", id: tc.id, name: tc.name, args: tc.args };
          case "input_json_delta":
            return { type: "input_json_delta", id: tc.id, index: k, input: JSON.stringify(tc.args) };
          case "toolUse":
            return { toolUse: { toolUseId: tc.id, name: tc.name, input: tc.args } };
        }
      });
      h[i] = rebuildAI(m, { content: [...text, ...blocks] });
      return;
    }
  }
}

/** Broken plans whose corruptions include ChatMessages and call blocks of every format. */
export const adapterBrokenPlanArb: fc.Arbitrary<HistoryPlan> = fc.record({
  system: fc.boolean(),
  turns: fc.array(turnArb, { minLength: 1, maxLength: 5 }),
  corruptions: fc.array(adapterCorruptionArb, { minLength: 1, maxLength: 6 }),
});

/**
 * The incidents of a thread with thinking on, as its client stores it (`"thinking"`: ChatAnthropic, `"reasoning"`:
 * ChatBedrockConverse): a run aborted mid-tool, a replayed checkpoint, a duplicate result, a message steered in
 * mid-loop, a stray result, a cut stream; Anthropic threads also server tools.
 */
function reasoningCorruptionArb(shape: ReasoningShape): fc.Arbitrary<Corruption> {
  const common: fc.Arbitrary<Corruption>[] = [
    fc.record({ op: fc.constant("dropResult" as const), at: pos }),
    fc.record({ op: fc.constant("truncate" as const), n: fc.nat(3) }),
    fc.record({ op: fc.constant("replay" as const), at: pos }),
    fc.record({ op: fc.constant("dupResult" as const), at: pos, same: fc.boolean() }),
    fc.record({ op: fc.constant("insertHuman" as const), at: pos }),
    fc.record({ op: fc.constant("moveResult" as const), at: pos, to: pos }),
    fc.record({ op: fc.constant("orphanResult" as const), at: pos }),
    fc.record({ op: fc.constant("emptyResult" as const), at: pos }),
  ];
  const own: fc.Arbitrary<Corruption>[] =
    shape === "thinking"
      ? [
          fc.record({
            op: fc.constant("unsignedThinking" as const),
            at: pos,
            shape: fc.constant<ReasoningShape>("thinking"),
          }),
          fc.record({
            op: fc.constant("serverTool" as const),
            at: pos,
            answered: fc.boolean(),
            tool: fc.constantFrom<ServerToolName>("web_search", "web_fetch", "code_execution"),
          }),
          fc.record({ op: fc.constant("thinking" as const), at: pos, redacted: fc.boolean() }),
        ]
      : [
          fc.record({
            op: fc.constant("unsignedThinking" as const),
            at: pos,
            shape: fc.constant<ReasoningShape>("reasoning"),
          }),
          fc.record({
            op: fc.constant("reasoning" as const),
            at: pos,
            kind: fc.constantFrom("signed" as const, "empty" as const),
          }),
        ];
  return fc.oneof(...common, ...own);
}

/** Threads of a model with thinking on, in the client's shapes, with incidents; some sent inside the tool loop. */
export function reasoningPlanArb(shape: ReasoningShape): fc.Arbitrary<HistoryPlan> {
  return fc.record({
    system: fc.boolean(),
    reasoning: fc.constant(shape),
    openLoop: fc.boolean(),
    turns: fc.array(turnArb, { minLength: 1, maxLength: 4 }),
    corruptions: fc.array(reasoningCorruptionArb(shape), { minLength: 1, maxLength: 5 }),
  });
}

export function buildHistory(plan: HistoryPlan): BaseMessage[] {
  const h = buildValid(plan);
  plan.corruptions.forEach((c, serial) => applyCorruption(h, c, serial));
  return h;
}

/**
 * The text of a message's content (strings and text blocks), for loss checks. Blank pieces are left out: the
 * provider rules remove blank blocks, which lose nothing.
 */
export function textOf(m: BaseMessage): string {
  const content = f(m).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((b) =>
      typeof b === "string"
        ? b
        : b && typeof b === "object" && typeof (b as Dict).text === "string"
          ? ((b as Dict).text as string)
          : "",
    )
    .filter((text) => text.trim() !== "")
    .join("\n");
}
