/**
 * `repairToolCalls`: the pipeline. A clean history returns the very input array; otherwise each named pass
 * repairs what it classifies, copy-on-write, and every repair is reported as data.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { defaultSyntheticText } from "../messages/build";
import { coerceMessage, isMessage } from "../messages/coerce";
import { isCleanHistory } from "./clean";
import { profileFor } from "./profiles";
import type { PassContext, ResolvedOptions } from "./context";
import { PASSES } from "./pipeline";
import type { RepairOptions, RepairResult, ToolCallRepair } from "../types";

export function resolveOptions(options: RepairOptions): ResolvedOptions {
  return {
    orphanCalls: options.orphanCalls ?? "answer",
    trailing: options.trailing ?? "answer",
    orphanResults: options.orphanResults ?? "convert",
    invalidCalls: options.invalidCalls ?? "answer",
    syntheticResultText: options.syntheticResultText ?? defaultSyntheticText,
  };
}

export function repairToolCalls<M = BaseMessage>(messages: M[], options: RepairOptions = {}): RepairResult<M> {
  if (!Array.isArray(messages)) throw new TypeError("langgraph-tool-repair: repairToolCalls expects an array of messages");
  const profile = profileFor(options.provider);
  const resolved = resolveOptions(options);
  if (isCleanHistory(messages, profile, resolved.trailing === "keep")) return { messages, repairs: [] };

  const repairs: ToolCallRepair[] = [];
  const origin = new Map<unknown, number>();
  const ctx: PassContext = {
    profile,
    options: resolved,
    trailingIsProblem: resolved.trailing !== "keep",
    callNotes: new Map(),
    derive(from, to) {
      const index = origin.get(from);
      if (index !== undefined && !origin.has(to)) origin.set(to, index);
    },
    report(repair, message, at) {
      const full: ToolCallRepair = { ...repair, index: origin.get(message) ?? at } as ToolCallRepair;
      for (const key of Object.keys(full) as (keyof ToolCallRepair)[]) if (full[key] === undefined) delete full[key];
      repairs.push(full);
      options.onRepair?.(full);
    },
  };
  let current = messages.map((m, i) => {
    if (isMessage(m)) {
      origin.set(m, i);
      return m;
    }
    const coerced = coerceMessage(m, i);
    origin.set(coerced, i);
    ctx.report({ problem: "malformed_message", action: "coerced_message", detail: "plain or serialized object turned into a LangChain message" }, coerced, i);
    return coerced;
  }) as BaseMessage[];
  for (const pass of PASSES) current = pass.repair(current, ctx);
  return { messages: (repairs.length === 0 ? messages : current) as M[], repairs };
}
