/**
 * Pass "turn-order" (request shaping): roles as the adapter sends them. Bedrock wants the first non-system message to be a
 * user message (B5) and user/assistant turns to alternate (B6); ChatBedrockConverse only merges runs of tool
 * results, so a user message right after tool results, or two user messages, reach Bedrock as two user turns.
 * Gemini has the same constraints (G1). Two user messages are merged; a missing turn is bridged with a short
 * message marked synthetic; nothing is dropped.
 * Inside the open tool loop of a thread with reasoning (the history ends on tool results and the loop's opening
 * assistant message starts with its reasoning), a bridged user turn would open a new loop whose first assistant
 * message has no reasoning of its own (B11: Claude on Bedrock with thinking on refuses it). There the user messages
 * move after the loop's last results instead: the request ends on them, and no loop is left open. An assistant
 * message without calls right before another one there (a cut stream's text) is joined into it, after its reasoning:
 * Anthropic would merge the two into one turn that starts with that text (A10), Bedrock would need a user turn between.
 * This runs for the providers that check reasoning (Anthropic too, where turns need not alternate; Bedrock; strict).
 */
import { HumanMessage, type BaseMessage, type MessageContent } from "@langchain/core/messages";
import { rebuildMessage, syntheticAssistantMessage, syntheticUserMessage } from "../../messages/build";
import { textTurnsInReasoningLoop, userTurnsInReasoningLoop } from "../../messages/exchanges";
import { isReasoningBlock, turnOf, type Turn } from "../../messages/inspect";
import { findEach, problem, sameOrNew, type FindContext, type PassContext, type RepairPass } from "../context";

const USER_AFTER_USER = "a user message right after another user message";
const NO_REPLY = [
  syntheticAssistantMessage,
  "[No reply was given to the tool results above before the next user message.]",
  "bridge",
  "inserted_assistant_message",
] as const;
/**
 * What a message needs: the sentence, and the placeholder turn inserted before it (its maker, text, id and the
 * repair's action); none: it is merged into the user message before it.
 */
const FIXES = {
  lead: {
    detail: "the first non-system message is an assistant message",
    insert: [
      syntheticUserMessage,
      "[The earlier part of this conversation is not included.]",
      "lead",
      "inserted_user_message",
    ] as const,
  },
  merge: { detail: USER_AFTER_USER, insert: undefined },
  bridgeUser: { detail: USER_AFTER_USER, insert: NO_REPLY },
  bridgeTool: { detail: "a user message right after tool results (sent as a second user turn)", insert: NO_REPLY },
  bridgeAssistant: {
    detail: "an assistant message right after another assistant message",
    insert: [syntheticUserMessage, "[continue]", "bridge", "inserted_user_message"] as const,
  },
};
const kindOf = (fix: object) => (fix === FIXES.lead ? "leading_non_user" : "consecutive_same_role");

/**
 * Judges each message against the turn before it (the pass and the clean walk alike): what it needs, if anything.
 * System messages are no turn here: they do not alternate.
 */
function turnJudge({ leadingUser, alternation }: FindContext["profile"]) {
  let prev: Turn;
  let prevMessage: BaseMessage | undefined;
  const reset = () => {
    prev = prevMessage = undefined;
  };
  const judge = (m: BaseMessage, turn = turnOf(m)) => {
    if (turn === undefined || turn === "system") return;
    const before = prev;
    const beforeMessage = prevMessage;
    prev = turn;
    prevMessage = m;
    if (before === undefined) return leadingUser && turn === "assistant" ? FIXES.lead : undefined;
    if (!alternation) return;
    // Only two HumanMessages merge; a ChatMessage keeps its own message (its role and name are its own).
    if (turn === "user" && before === "user")
      return HumanMessage.isInstance(m) && HumanMessage.isInstance(beforeMessage) ? FIXES.merge : FIXES.bridgeUser;
    if (turn === "user" && before === "tool") return FIXES.bridgeTool;
    return turn === "assistant" && before === "assistant" ? FIXES.bridgeAssistant : undefined;
  };
  return { judge, reset };
}

function classifyTurns(messages: readonly BaseMessage[], ctx: FindContext) {
  const { judge } = turnJudge(ctx.profile);
  return findEach(messages, (m, index) => {
    const fix = judge(m);
    return fix && { index, fix };
  });
}

/** The contents of a run of user messages as one: joined text, or all their blocks in order. */
function mergeContents(parts: MessageContent[]) {
  if (parts.every((p) => typeof p === "string")) return parts.join("\n\n");
  const blocks = [];
  for (const part of parts) {
    if (typeof part === "string") blocks.push({ type: "text", text: part });
    else for (const block of part) blocks.push(block);
  }
  return blocks;
}

/** The history with the user messages inside an open reasoning loop moved after its last results (reported). */
function deferredLoopTurns(messages: BaseMessage[], ctx: PassContext) {
  const inside = userTurnsInReasoningLoop(messages, ctx.profile.alternation);
  if (!inside.length) return messages;
  const moved = new Set(inside);
  for (const i of inside) ctx.report(messages[i], i, "consecutive_same_role", "moved_message", MOVE_DETAIL);
  return [...messages.filter((_, i) => !moved.has(i)), ...inside.map((i) => messages[i])];
}

/** Content as blocks: a string becomes one text block (none when blank). */
const blocksOf = (content: unknown): unknown[] =>
  Array.isArray(content)
    ? content
    : typeof content === "string" && content.trim() !== ""
      ? [{ type: "text", text: content }]
      : [];

/** The history with each text-only assistant message of an open reasoning loop joined into the next one (reported). */
function joinedLoopTurns(messages: BaseMessage[], ctx: PassContext) {
  const joining = new Set(textTurnsInReasoningLoop(messages, ctx.profile.alternation));
  if (!joining.size) return messages;
  const out: BaseMessage[] = [];
  let pending: unknown[] = [];
  messages.forEach((m, i) => {
    if (joining.has(i)) {
      pending.push(...blocksOf(m.content));
      ctx.report(m, i, "consecutive_same_role", "merged_messages", JOIN_DETAIL);
      return;
    }
    if (!pending.length) return out.push(m);
    const own = blocksOf(m.content);
    let lead = 0;
    while (lead < own.length && isReasoningBlock(own[lead])) lead++;
    const joined = rebuildMessage(m, { content: [...own.slice(0, lead), ...pending, ...own.slice(lead)] });
    ctx.derive(m, joined);
    out.push(joined);
    pending = [];
  });
  return out;
}

const MOVE_DETAIL =
  "user message inside the open tool loop moved after its results, so the loop's opening turn keeps its reasoning first";
const JOIN_DETAIL =
  "assistant message without calls joined into the next one, after its reasoning, inside the open tool loop";

/**
 * What the open tool loop of a thread with reasoning holds to fix, each with its sentence: the text-only assistant
 * messages to join, then the user messages to move where turns need not alternate (Bedrock's follow tool results:
 * the judge finds those, and the repair moves them).
 */
const loopTurns = (messages: readonly BaseMessage[], { alternation, signedReasoning }: FindContext["profile"]) =>
  signedReasoning
    ? [
        ...textTurnsInReasoningLoop(messages, alternation).map((i) => [i, JOIN_DETAIL] as const),
        ...(alternation ? [] : userTurnsInReasoningLoop(messages, false)).map((i) => [i, MOVE_DETAIL] as const),
      ]
    : [];

export const turnOrderPass: RepairPass = {
  structural: false,
  clean(w) {
    const { profile } = w;
    const { alternation, signedReasoning } = profile;
    if (!profile.leadingUser && !alternation && !signedReasoning) return;
    const { judge, reset } = turnJudge(profile);
    return {
      start: reset,
      visit: (m, _, turn) => judge(m as BaseMessage, turn) === undefined,
      // The open tool loop of a thread with reasoning: no text-only assistant message to join, no user turn to move.
      end: signedReasoning ? () => loopTurns(w.messages as BaseMessage[], profile).length === 0 : undefined,
    };
  },
  find(messages, ctx) {
    const joins = loopTurns(messages, ctx.profile);
    // In any order: the front door sorts every pass's problems by index.
    return [
      ...joins.map(([i, detail]) => problem(ctx, "consecutive_same_role", i, detail)),
      ...classifyTurns(messages, ctx)
        .filter(({ index }) => !joins.some(([i]) => i === index))
        .map(({ index, fix }) => problem(ctx, kindOf(fix), index, fix.detail)),
    ];
  },
  repair(input, ctx) {
    // User turns leave the loop first: the assistant messages they separated may then need joining.
    const messages = ctx.profile.signedReasoning ? joinedLoopTurns(deferredLoopTurns(input, ctx), ctx) : input;
    const found = classifyTurns(messages, ctx);
    if (!found.length) return sameOrNew(input, messages);
    const out: BaseMessage[] = [];
    let lastUser = -1; // index in `out` of the last user message, which a following one merges into
    // A run of merged user messages is built once at its end, so a run of any length costs its own size.
    let run: { at: number; parts: MessageContent[] } | undefined;
    const closeRun = () => {
      if (!run) return;
      const into = out[run.at];
      const merged = rebuildMessage(into, { content: mergeContents(run.parts) });
      ctx.derive(into, merged);
      out[run.at] = merged;
      run = undefined;
    };
    let next = 0;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i];
      const fix = found[next]?.index === i ? found[next++].fix : undefined;
      if (fix?.insert) {
        const [make, text, id, action] = fix.insert;
        out.push(make(text, kindOf(fix), `tool-repair-${id}-${typeof m.id === "string" ? m.id : `at-${i}`}`));
        ctx.report(m, i, kindOf(fix), action, fix.detail);
      } else if (fix) {
        // A merge always follows a user message (the judge says so): the one `lastUser` points at.
        run ??= { at: lastUser, parts: [out[lastUser].content] };
        run.parts.push(m.content);
        ctx.report(m, i, "consecutive_same_role", "merged_messages", fix.detail);
        continue;
      }
      const turn = turnOf(m);
      if (turn !== undefined && turn !== "system") closeRun();
      if (turn === "user") lastUser = out.length;
      out.push(m);
    }
    closeRun();
    return sameOrNew(messages, out);
  },
};
