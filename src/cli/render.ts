/**
 * What the command prints: the per-thread diff of a repair, JSON lines, and the closing summary. Output is
 * plain text (no colors), readable in a terminal and in a CI log alike.
 */
import type { BaseMessage, ToolMessage } from "@langchain/core/messages";
import {
  isAssistant,
  isSyntheticResult,
  isToolResult,
  repairMarkerOf,
  resultIdOf,
  toolCallIdsOf,
} from "../messages/inspect";
import { TOOL_RUN_STATES, type Provider, type ToolCallProblem, type ToolRunState } from "../types";
import type { ThreadRepairReport, ThreadRepairStatus } from "../threads/repair";
import type { ProviderSource, ThreadReport, ThreadStatus } from "../threads/scan";

const number = (n: number) => n.toLocaleString("en-US");
const plural = (n: number, what: string) => `${what}${n === 1 ? "" : "s"}`;
const bump = <K>(counts: Map<K, number>, key: K, n = 1) => counts.set(key, (counts.get(key) ?? 0) + n);
/** Counted names: `a, b x2`. */
const counted = (counts: Iterable<[string, number]>) =>
  [...counts].map(([name, n]) => (n > 1 ? `${name} x${n}` : name)).join(", ");

/** One line of text: white space collapsed, cut to `max` characters. */
export function shortText(text: string, max = 48): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.flatMap((b) => (typeof b === "string" ? [b] : typeof b?.text === "string" ? [b.text] : [])).join(" ")
      : "";

/**
 * `role  id  what it says`, e.g. `ai  run-1  calls search_flights(tooluse_1), search_hotels(tooluse_2)`. Ids are
 * printed whole: they are what a person greps for (a message id on one line and at most 80 characters).
 */
function describeMessage(message: BaseMessage): string {
  const id = typeof message.id === "string" && message.id ? shortText(message.id, 80) : "-";
  let what: string;
  if (isAssistant(message)) {
    const names = new Map((message.tool_calls ?? []).map((c) => [c.id, c.name]));
    const ids = toolCallIdsOf(message);
    const text = shortText(textOf(message.content), 32);
    what = [
      text && `"${text}"`,
      ids.length > 0 && `calls ${ids.map((callId) => `${names.get(callId) ?? "?"}(${callId})`).join(", ")}`,
    ]
      .filter(Boolean)
      .join(" ");
  } else if (isToolResult(message)) {
    const name = typeof message.name === "string" && message.name ? ` ${message.name}` : "";
    what = `answers ${resultIdOf(message) ?? "?"}${name}: "${shortText(textOf(message.content), 40)}"`;
  } else what = `"${shortText(textOf(message.content))}"`;
  const role = typeof message.getType === "function" ? message.getType() : "?";
  return `${role.padEnd(6)} ${id}  ${what}`;
}

export interface DiffLine {
  mark: " " | "+" | "-";
  /** Position in the repaired list (" " and "+") or, for "-", in the stored list. */
  index: number;
  message: BaseMessage;
}

/**
 * The repaired list against the stored one. Messages the repair did not touch are the very same objects in
 * both lists, so the diff follows identity, in one pass over each list: a moved message shows as removed
 * where it was and added where it went.
 */
export function diffMessages(before: readonly BaseMessage[], after: readonly BaseMessage[]): DiffLine[] {
  const inBefore = new Set(before);
  const inAfter = new Set(after);
  const lines: DiffLine[] = [];
  const consumed = new Set<BaseMessage>();
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const b = before[i];
    const a = after[j];
    if (i < before.length && j < after.length && b === a) {
      lines.push({ mark: " ", index: j++, message: b });
      i++;
    } else if (i < before.length && (!inAfter.has(b) || consumed.has(b) || j >= after.length)) {
      lines.push({ mark: "-", index: i++, message: b });
    } else if (j < after.length && (!inBefore.has(a) || consumed.has(a) || i >= before.length)) {
      lines.push({ mark: "+", index: j++, message: a });
    } else {
      // Both kept, but not here: `b` moved later. Show it leaving; it is shown again where it lands.
      consumed.add(b);
      lines.push({ mark: "-", index: i++, message: b });
    }
  }
  return lines;
}

/** Messages of context kept around each change. */
const CONTEXT = 2;

/** What a placeholder's marker knows of the run; never more (a call that may have started is not "did not run"). */
const PLACEHOLDER_RUN: Record<ToolRunState, string> = {
  never_started: "the tool never started",
  outcome_unknown: "the tool's outcome is unknown",
  cancelled: "cancelled before the tool ran",
};

/** The note after an added result: a placeholder (what its marker knows), or a real result put back. */
function resultNote(message: ToolMessage, salvaged: readonly string[]): string {
  if (isSyntheticResult(message)) {
    // A marker written before `toolRun` existed knows nothing more: outcome unknown, the default.
    const run = repairMarkerOf(message)?.toolRun;
    return `   [placeholder: ${PLACEHOLDER_RUN[run !== undefined && TOOL_RUN_STATES.includes(run) ? run : "outcome_unknown"]}]`;
  }
  const id = resultIdOf(message);
  return id !== undefined && salvaged.includes(id) ? "   [real result, from pending writes]" : "";
}

/** The diff with unchanged stretches folded, a little context around each change. */
export function renderDiff(report: ThreadRepairReport): string[] {
  const lines = diffMessages(report.before ?? [], report.after ?? []);
  const changes = lines.flatMap((line, k) => (line.mark === " " ? [] : [k]));
  const out: string[] = [];
  let folded = 0;
  const flush = () => {
    if (folded > 0) out.push(`      … ${number(folded)} unchanged ${plural(folded, "message")}`);
    folded = 0;
  };
  lines.forEach(({ mark, index, message }, k) => {
    if (!changes.some((c) => Math.abs(c - k) <= CONTEXT)) {
      folded++;
      return;
    }
    flush();
    const note = mark === "+" && isToolResult(message) ? resultNote(message, report.salvaged) : "";
    const at = mark === "-" ? `(${index})` : String(index);
    out.push(`  ${mark} ${at.padStart(5)} ${describeMessage(message)}${note}`);
  });
  flush();
  return out;
}

const where = (r: { threadId: string; namespace: string }) =>
  `thread ${r.threadId}${r.namespace ? ` (namespace ${r.namespace})` : ""}`;

/** The block printed for one thread by `repair` (text mode); empty for threads with nothing to say. */
export function renderRepair(report: ThreadRepairReport): string[] {
  const { status, repairs, salvaged, reason } = report;
  const count = (n: number, what: string) => `${n} ${plural(n, what)}`;
  if (status === "would_repair" || status === "repaired") {
    const done = `${count(repairs.length, "repair")}${
      salvaged.length > 0 ? `, ${count(salvaged.length, "real result")} put back from pending writes` : ""
    }`;
    const head =
      status === "repaired"
        ? `repaired (${done}); new checkpoint ${String(report.written?.configurable?.checkpoint_id)} on top of ${report.checkpointId}`
        : `would repair (${done}) on top of checkpoint ${report.checkpointId}`;
    const reshape =
      report.reshape.length > 0
        ? [
            `  ${report.provider} requests still need ${SHAPED_BY} (request shaping, never stored): ${kindsText(report.reshape)}`,
          ]
        : [];
    return [`${where(report)}: ${head}`, ...renderDiff(report), ...reshape, ""];
  }
  if (status === "skipped") return [`${where(report)}: skipped: ${reason}`, ""];
  if (status === "failed")
    return [`${where(report)}: FAILED: ${reason}`, ...(report.after ? renderDiff(report) : []), ""];
  if (status === "unreadable") return [`${where(report)}: unreadable, skipped: ${reason}`, ""];
  return [];
}

/** Problem kinds with their rules, counted: `consecutive_same_role (B6)`, `parallel_calls (G3) x2`. */
function kindsText(problems: readonly ToolCallProblem[]): string {
  const counts = new Map<string, number>();
  for (const p of problems) bump(counts, p.rules.length > 0 ? `${p.kind} (${p.rules.join(", ")})` : p.kind);
  return counted(counts);
}

/** What the middleware must still do per request: a plain agent of that provider is refused without it. */
const SHAPED_BY = "toolCallRepairMiddleware / toolCallRepairHook";

const problemJson = (p: ToolCallProblem) => ({
  kind: p.kind,
  index: p.index,
  ...(p.toolCallId ? { toolCallId: p.toolCallId } : {}),
  ...(p.toolName ? { toolName: p.toolName } : {}),
  rules: p.rules,
});

export function scanJson(report: ThreadReport): string {
  return JSON.stringify({
    thread: report.threadId,
    namespace: report.namespace,
    checkpoint: report.checkpointId ?? null,
    writtenAt: report.writtenAt ?? null,
    status: report.status,
    ...(report.provider ? { provider: report.provider, providerFrom: report.providerFrom } : {}),
    messages: report.messageCount,
    structural: report.structural,
    problems: report.problems.map(problemJson),
    ...(report.error ? { error: report.error } : {}),
  });
}

export function repairJson(report: ThreadRepairReport): string {
  return JSON.stringify({
    thread: report.threadId,
    namespace: report.namespace,
    checkpoint: report.checkpointId ?? null,
    status: report.status,
    found: report.found,
    ...(report.provider ? { provider: report.provider, providerFrom: report.providerFrom } : {}),
    problems: report.problems.map(problemJson),
    repairs: report.repairs.map(({ action, problem, index, toolCallId, toolName }) => ({
      action,
      problem,
      index,
      ...(toolCallId ? { toolCallId } : {}),
      ...(toolName ? { toolName } : {}),
    })),
    reshape: report.reshape.map(problemJson),
    salvaged: report.salvaged,
    ...(report.written ? { written: report.written.configurable?.checkpoint_id ?? null } : {}),
    ...(report.reason ? { reason: report.reason } : {}),
  });
}

// ---------------------------------------------------------------------------------------------------------
// Summary: counts only, plus a bounded list of the worst threads and of unreadable ones.

const WORST = 10;
const LISTED_ERRORS = 10;

export class Tally {
  readonly found = new Map<ThreadStatus, number>();
  readonly outcomes = new Map<ThreadRepairStatus, number>();
  /** Per problem kind (structural ones of broken threads, and the rest): problems and threads. */
  readonly kinds = new Map<string, { problems: number; threads: number }>();
  /** Threads still broken after the run (scan: every broken one), the most problems first. */
  readonly worst: { label: string; structural: number; kinds: string }[] = [];
  readonly errors: string[] = [];
  /** Threads per provider judged for and where it came from (`bedrock` from the thread, `strict` by default). */
  readonly judged = new Map<string, number>();
  /** Per provider: the threads a request still needs shaping for (after their repair), and the problems. */
  readonly reshape = new Map<Provider, { threads: number; problems: ToolCallProblem[] }>();
  threads = 0;

  add(report: ThreadReport | ThreadRepairReport): void {
    this.threads++;
    const repair = "found" in report ? report : undefined;
    const found = repair ? repair.found : report.status;
    bump(this.found, found);
    if (repair) bump(this.outcomes, repair.status);
    const perKind = new Map<string, number>();
    for (const p of report.problems) bump(perKind, p.kind);
    for (const [kind, n] of perKind) {
      const entry = this.kinds.get(kind) ?? { problems: 0, threads: 0 };
      entry.problems += n;
      entry.threads++;
      this.kinds.set(kind, entry);
    }
    // After `repair --apply`, a repaired thread is no longer broken: only those the run left broken are listed.
    if (found === "broken" && repair?.status !== "repaired") {
      const { structural } = report;
      if (this.worst.length < WORST || structural > this.worst[WORST - 1].structural) {
        this.worst.push({ label: where(report), structural, kinds: counted(perKind) });
        this.worst.sort((a, b) => b.structural - a.structural);
        if (this.worst.length > WORST) this.worst.pop();
      }
    }
    const { provider } = report;
    if (provider) bump(this.judged, `${provider} (${PROVIDER_FROM[report.providerFrom ?? "default"]})`);
    const reshape = repair ? repair.reshape : report.status === "reshape" ? report.problems : [];
    const fixed = repair?.status === "repaired" || repair?.status === "would_repair";
    if (provider && reshape.length > 0 && (fixed || found !== "broken")) {
      const entry = this.reshape.get(provider) ?? { threads: 0, problems: [] };
      entry.threads++;
      if (entry.problems.length < 1_000) entry.problems.push(...reshape.slice(0, 10));
      this.reshape.set(provider, entry);
    }
    if ((found === "unreadable" || repair?.status === "failed") && this.errors.length < LISTED_ERRORS)
      this.errors.push(
        `${where(report)}: ${(repair ? repair.reason : (report as ThreadReport).error) ?? "unknown error"}`,
      );
  }

  count(status: ThreadStatus): number {
    return this.found.get(status) ?? 0;
  }

  outcome(status: ThreadRepairStatus): number {
    return this.outcomes.get(status) ?? 0;
  }
}

const PROVIDER_FROM: Record<ProviderSource, string> = {
  option: "--provider",
  thread: "read from the thread",
  default: "default",
};

const FOUND_LINES: [ThreadStatus, string][] = [
  ["clean", "clean"],
  ["broken", "broken (structural problems: repair fixes these)"],
  [
    "reshape",
    "need request shaping only (done per request by the middleware, the hook or withRequestRepair; never stored)",
  ],
  ["open", "end on tool calls a resume may still run (left alone)"],
  ["no_messages", "no message list"],
  ["unreadable", "unreadable (skipped)"],
];

const OUTCOME_LINES: [ThreadRepairStatus, string][] = [
  ["repaired", "repaired (new checkpoint on top)"],
  ["would_repair", "would be repaired (dry run: run again with --apply)"],
  ["skipped", "skipped (a live run wrote to them)"],
  ["failed", "failed"],
];

export function renderSummary(
  tally: Tally,
  info: { label: string; elapsedMs: number; stopped?: string; repair: boolean; nextCommand?: string },
): string[] {
  const { repair } = info;
  const seconds = info.elapsedMs / 1000;
  const speed = seconds >= 1 ? ` (${number(Math.round(tally.threads / seconds))}/s)` : "";
  const lines = [
    `${info.label}: ${number(tally.threads)} ${plural(tally.threads, "thread")} read in ${seconds.toFixed(1)} s${speed}`,
  ];
  if (info.stopped) lines.push(`Stopped early: ${info.stopped}`);
  const width = Math.max(...[...tally.found.values(), ...tally.outcomes.values(), 0].map((n) => number(n).length), 1);
  const countLine = (n: number, text: string) => lines.push(`  ${number(n).padStart(width)}  ${text}`);
  for (const [status, text] of FOUND_LINES) {
    const n = tally.count(status);
    // A repair counts what it read: the broken threads it then repaired are listed under "Repair:".
    if (n > 0 || status === "clean" || status === "broken")
      countLine(n, repair && status === "broken" ? "broken when read (structural problems)" : text);
  }
  if (repair) {
    lines.push("Repair:");
    for (const [status, text] of OUTCOME_LINES) if (tally.outcome(status) > 0) countLine(tally.outcome(status), text);
    if (tally.count("broken") === 0) lines.push("  nothing to repair");
  }
  if (tally.kinds.size > 0) {
    lines.push(`Problems${repair ? " found" : ""} (kind: problems in threads):`);
    const kinds = [...tally.kinds].sort((a, b) => b[1].problems - a[1].problems);
    const kindWidth = Math.max(...kinds.map(([kind]) => kind.length));
    for (const [kind, { problems, threads }] of kinds)
      lines.push(`  ${kind.padEnd(kindWidth)}  ${number(problems)} in ${number(threads)}`);
  }
  for (const [provider, { threads, problems }] of tally.reshape)
    lines.push(
      `${number(threads)} ${plural(threads, "thread")} need${threads === 1 ? "s" : ""} ${SHAPED_BY} for ` +
        `${provider} requests (request shaping, never stored; a plain agent is refused): ${kindsText(problems)}`,
    );
  if (tally.judged.size > 0)
    lines.push(`Judged for: ${[...tally.judged].map(([judged, n]) => `${judged} ${number(n)}`).join(", ")}`);
  if (tally.worst.length > 0) {
    lines.push(repair ? "Still broken (most problems first):" : "Most broken threads:");
    for (const w of tally.worst) lines.push(`  ${w.label}: ${w.kinds}`);
  }
  if (tally.errors.length > 0) {
    lines.push(repair ? "Unreadable or failed:" : "Unreadable:");
    for (const e of tally.errors) lines.push(`  ${e}`);
  }
  if (info.nextCommand) lines.push(`Next: ${info.nextCommand}`);
  return lines;
}
