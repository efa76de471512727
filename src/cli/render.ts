/**
 * What the command prints: the per-thread diff of a repair, JSON lines, and the closing summary. Output is
 * plain text (no colors), readable in a terminal and in a CI log alike.
 */
import type { BaseMessage } from "@langchain/core/messages";
import {
  isAssistant,
  isSyntheticResult,
  isToolResult,
  repairMarkerOf,
  resultIdOf,
  toolCallIdsOf,
} from "../messages/inspect";
import type { Provider, ToolCallProblem } from "../types";
import type { Dict } from "../values";
import type { ThreadRepairReport } from "../threads/repair";
import type { ThreadReport, ThreadStatus } from "../threads/scan";
import { num } from "./progress";

/** `3 repairs`, `1 repair`. */
const many = (n: number, what: string) => `${num(n)} ${what}${n === 1 ? "" : "s"}`;
const bump = <K>(counts: Map<K, number>, key: K, n = 1) => counts.set(key, (counts.get(key) ?? 0) + n);
/** Counted names: `a, b x2`. */
const counted = (counts: Map<string, number>) =>
  [...counts].map(([name, n]) => (n > 1 ? `${name} x${n}` : name)).join(", ");
/** A problem kind with its rules: `consecutive_same_role (B6)`. */
const kindOf = (p: ToolCallProblem) => (p.rules.length ? `${p.kind} (${p.rules.join(", ")})` : p.kind);

const kindsOf = (problems: ToolCallProblem[], counts = new Map<string, number>()) =>
  problems.reduce((counts, p) => bump(counts, kindOf(p)), counts);

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
function describeMessage(m: BaseMessage): string {
  let what = `"${shortText(textOf(m.content))}"`;
  if (isAssistant(m)) {
    const names = new Map(m.tool_calls?.map((c) => [c.id, c.name]));
    const ids = toolCallIdsOf(m);
    const text = shortText(textOf(m.content), 32);
    what = [text && `"${text}"`, ids.length && `calls ${ids.map((id) => `${names.get(id) ?? "?"}(${id})`).join(", ")}`]
      .filter(Boolean)
      .join(" ");
  } else if (isToolResult(m))
    what = `answers ${resultIdOf(m) ?? "?"}${m.name ? ` ${m.name}` : ""}: "${shortText(textOf(m.content), 40)}"`;
  return `${(m.getType?.() ?? "?").padEnd(6)} ${typeof m.id === "string" && m.id ? shortText(m.id, 80) : "-"}  ${what}`;
}

/**
 * The repaired list against the stored one. Messages the repair did not touch are the very same objects in
 * both lists, so the diff follows identity, in one pass over each list: a moved message shows as removed
 * where it was and added where it went. `index`: in the repaired list (" " and "+"), in the stored one ("-").
 */
export function diffMessages(before: readonly BaseMessage[], after: readonly BaseMessage[]) {
  const inBefore = new Set(before);
  const inAfter = new Set(after);
  // Messages shown leaving although kept: each is shown again where it lands.
  const moved = new Set<BaseMessage>();
  const lines: { mark: " " | "+" | "-"; index: number; message: BaseMessage }[] = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    const b = before[i];
    const a = after[j];
    if (b === a) {
      lines.push({ mark: " ", index: j++, message: a });
      i++;
    } else if (b && (!a || !inAfter.has(b) || moved.has(b) || (inBefore.has(a) && !moved.has(a)))) {
      moved.add(b);
      lines.push({ mark: "-", index: i++, message: b });
    } else lines.push({ mark: "+", index: j++, message: a });
  }
  return lines;
}

/** What a placeholder's marker knows of the run; never more (a call that may have started is not "did not run"). */
const PLACEHOLDER_RUN: Record<string, string> = {
  never_started: "the tool never started",
  outcome_unknown: "the tool's outcome is unknown",
  cancelled: "cancelled before the tool ran",
};

/** The diff with unchanged stretches folded, two messages of context around each change. */
export function renderDiff(report: ThreadRepairReport): string[] {
  const lines = diffMessages(report.before ?? [], report.after ?? []);
  const out: string[] = [];
  let folded = 0;
  const flush = () => {
    if (folded) out.push(`      … ${many(folded, "unchanged message")}`);
    folded = 0;
  };
  lines.forEach(({ mark, index, message: m }, k) => {
    if (!lines.slice(Math.max(0, k - 2), k + 3).some((l) => l.mark !== " ")) return void folded++;
    flush();
    // An added result: a placeholder (what its marker knows; a marker without `toolRun` knows nothing more), or a
    // real result put back.
    const note =
      mark !== "+" || !isToolResult(m)
        ? ""
        : isSyntheticResult(m)
          ? `   [placeholder: ${PLACEHOLDER_RUN[repairMarkerOf(m)?.toolRun ?? ""] ?? PLACEHOLDER_RUN.outcome_unknown}]`
          : report.salvaged.includes(resultIdOf(m) ?? "")
            ? "   [real result, from pending writes]"
            : "";
    out.push(`  ${mark} ${(mark === "-" ? `(${index})` : `${index}`).padStart(5)} ${describeMessage(m)}${note}`);
  });
  flush();
  return out;
}

const where = (r: { threadId: string; namespace: string }) =>
  `thread ${r.threadId}${r.namespace ? ` (namespace ${r.namespace})` : ""}`;

/** What the middleware must still do per request: a plain agent of that provider is refused without it. */
const SHAPED_BY = "toolCallRepairMiddleware / toolCallRepairHook";

/** The block printed for one thread by `repair` (text mode); empty for threads with nothing to say. */
export function renderRepair(r: ThreadRepairReport): string[] {
  const { status } = r;
  if (status === "would_repair" || status === "repaired") {
    const done = `${many(r.repairs.length, "repair")}${
      r.salvaged.length ? `, ${many(r.salvaged.length, "real result")} put back from pending writes` : ""
    }`;
    return [
      `${where(r)}: ${
        status === "repaired"
          ? `repaired (${done}); new checkpoint ${r.written?.configurable?.checkpoint_id} on top of ${r.checkpointId}`
          : `would repair (${done}) on top of checkpoint ${r.checkpointId}`
      }`,
      ...renderDiff(r),
      ...(r.reshape.length
        ? [
            `  ${r.provider} requests still need ${SHAPED_BY} (request shaping, never stored): ${counted(kindsOf(r.reshape))}`,
          ]
        : []),
      "",
    ];
  }
  const says = ({ skipped: "skipped", failed: "FAILED", unreadable: "unreadable, skipped" } as Dict)[status];
  return says
    ? [`${where(r)}: ${says}: ${r.reason}`, ...(status === "failed" && r.after ? renderDiff(r) : []), ""]
    : [];
}

const pick = <T>(o: T, keys: (keyof T)[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));
const problemJson = (p: ToolCallProblem) => pick(p, ["kind", "index", "toolCallId", "toolName", "rules"]);

/** One JSON line per thread: a scan's report, or a repair's (which has `found`). Empty ids and names are left out. */
export function reportJson(report: ThreadReport | ThreadRepairReport): string {
  const { found, writtenAt, structural, provider, written, ...r } = report as ThreadReport & ThreadRepairReport;
  const json = {
    thread: r.threadId,
    namespace: r.namespace,
    checkpoint: r.checkpointId ?? null,
    writtenAt: found ? undefined : (writtenAt ?? null),
    status: r.status,
    found,
    provider,
    providerFrom: provider && r.providerFrom,
    messages: r.messageCount,
    structural: found ? undefined : structural,
    problems: r.problems.map(problemJson),
    repairs: r.repairs?.map((p) => pick(p, ["action", "problem", "index", "toolCallId", "toolName"])),
    reshape: r.reshape?.map(problemJson),
    salvaged: r.salvaged,
    written: written && (written.configurable?.checkpoint_id ?? null),
    error: r.error || undefined,
    reason: r.reason || undefined,
  };
  return JSON.stringify(json, (key, value) => (value === "" && key.startsWith("tool") ? undefined : value));
}

// ---------------------------------------------------------------------------------------------------------
// Summary: counts only, plus a bounded list of the worst threads and of unreadable ones.

const LISTED = 10;

export class Tally {
  threads = 0;
  /** Threads per status found and, for repair, per outcome (`unreadable`, which is both, counted once). */
  readonly counts = new Map<string, number>();
  /** Per problem kind (structural ones of broken threads, and the rest): problems, and threads. */
  readonly kinds = new Map<string, number>();
  readonly kindThreads = new Map<string, number>();
  /** Threads still broken after the run (scan: every broken one), the most problems first. */
  readonly worst: [structural: number, line: string][] = [];
  readonly errors: string[] = [];
  /** Threads per provider judged for and where it came from (`bedrock (read from the thread)`). */
  readonly judged = new Map<string, number>();
  /** Per provider: the threads a request still needs shaping for (after their repair), and their problems. */
  readonly reshape = new Map<Provider, [threads: number, kinds: Map<string, number>]>();

  add(report: ThreadReport | ThreadRepairReport): void {
    this.threads++;
    const repair = "found" in report ? report : undefined;
    const found = repair?.found ?? report.status;
    const status = repair?.status;
    bump(this.counts, found);
    if (status && status !== found) bump(this.counts, status);
    const perKind = report.problems.reduce((m, p) => bump(m, p.kind), new Map<string, number>());
    for (const [kind, n] of perKind) {
      bump(this.kinds, kind, n);
      bump(this.kindThreads, kind);
    }
    const { structural, provider } = report;
    const label = where(report);
    // After `repair --apply`, a repaired thread is no longer broken: only those the run left broken are listed.
    if (found === "broken" && status !== "repaired" && (this.worst[LISTED - 1]?.[0] ?? -1) < structural) {
      this.worst.push([structural, `${label}: ${counted(perKind)}`]);
      this.worst.sort((a, b) => b[0] - a[0]).splice(LISTED);
    }
    if ((found === "unreadable" || status === "failed") && this.errors.length < LISTED)
      this.errors.push(`${label}: ${(report as ThreadReport).error ?? repair?.reason ?? "unknown error"}`);
    if (!provider) return;
    bump(this.judged, `${provider} (${PROVIDER_FROM[report.providerFrom ?? "default"]})`);
    // A scan's thread that is not broken has problems of request shaping only.
    const reshape = repair ? repair.reshape : report.problems;
    if (reshape.length && (found !== "broken" || status === "repaired" || status === "would_repair")) {
      const entry = this.reshape.get(provider) ?? [0, new Map<string, number>()];
      entry[0]++;
      kindsOf(reshape, entry[1]);
      this.reshape.set(provider, entry);
    }
  }

  count(status: ThreadStatus | ThreadRepairReport["status"]): number {
    return this.counts.get(status) ?? 0;
  }
}

const PROVIDER_FROM = { option: "--provider", thread: "read from the thread", default: "default" };

const FOUND_LINES = {
  clean: "clean",
  broken: "broken (structural problems: repair fixes these)",
  reshape:
    "need request shaping only (done per request by the middleware, the hook or withRequestRepair; never stored)",
  open: "end on tool calls a resume may still run (left alone)",
  no_messages: "no message list",
  unreadable: "unreadable (skipped)",
};

const OUTCOME_LINES = {
  repaired: "repaired (new checkpoint on top)",
  would_repair: "would be repaired (dry run: run again with --apply)",
  skipped: "skipped (a live run wrote to them)",
  failed: "failed",
};

export function renderSummary(
  tally: Tally,
  info: { label: string; elapsedMs: number; stopped?: string; repair: boolean; nextCommand: string | false },
): string[] {
  const { repair } = info;
  const seconds = info.elapsedMs / 1000;
  const speed = seconds >= 1 ? ` (${num(Math.round(tally.threads / seconds))}/s)` : "";
  const lines = [`${info.label}: ${many(tally.threads, "thread")} read in ${seconds.toFixed(1)} s${speed}`];
  const section = (title: string, items: string[]) => items.length && lines.push(title, ...items);
  if (info.stopped) lines.push(`Stopped early: ${info.stopped}`);
  const width = num(Math.max(0, ...tally.counts.values())).length;
  // Clean and broken are said even when none.
  const counts = (texts: Record<string, string>, always = 0) =>
    Object.entries(texts).flatMap(([status, text], i) => {
      const n = tally.counts.get(status) ?? 0;
      return n || i < always ? [`  ${num(n).padStart(width)}  ${text}`] : [];
    });
  // A repair counts what it read: the broken threads it then repaired are listed under "Repair:".
  lines.push(...counts(repair ? { ...FOUND_LINES, broken: "broken when read (structural problems)" } : FOUND_LINES, 2));
  if (repair)
    lines.push("Repair:", ...counts(OUTCOME_LINES), ...(tally.count("broken") ? [] : ["  nothing to repair"]));
  const kinds = [...tally.kinds].sort((a, b) => b[1] - a[1]);
  const kindWidth = Math.max(...kinds.map(([kind]) => kind.length));
  section(
    `Problems${repair ? " found" : ""} (kind: problems in threads):`,
    kinds.map(([kind, n]) => `  ${kind.padEnd(kindWidth)}  ${num(n)} in ${num(tally.kindThreads.get(kind) ?? 0)}`),
  );
  for (const [provider, [threads, kinds]] of tally.reshape)
    lines.push(
      `${many(threads, "thread")} need${threads === 1 ? "s" : ""} ${SHAPED_BY} for ${provider} requests ` +
        `(request shaping, never stored; a plain agent is refused): ${counted(kinds)}`,
    );
  if (tally.judged.size)
    lines.push(`Judged for: ${[...tally.judged].map(([judged, n]) => `${judged} ${num(n)}`).join(", ")}`);
  section(
    repair ? "Still broken (most problems first):" : "Most broken threads:",
    tally.worst.map((w) => `  ${w[1]}`),
  );
  section(
    repair ? "Unreadable or failed:" : "Unreadable:",
    tally.errors.map((e) => `  ${e}`),
  );
  if (info.nextCommand) lines.push(`Next: ${info.nextCommand}`);
  return lines;
}
