/**
 * What the command prints: a line for each thread a repair changes or cannot, JSON lines, and the closing
 * summary. Output is plain text (no colors), readable in a terminal and in a CI log alike.
 */
import type { Provider, ToolCallProblem } from "../types";
import type { Dict } from "../values";
import type { ThreadRepairReport } from "../threads/repair";
import type { RevertReport } from "../threads/revert";
import type { ThreadReport } from "../threads/scan";
import { num } from "./progress";

type Report = ThreadReport | ThreadRepairReport;

/** How a line names a thread: `thread t1`, `thread t1 (namespace sub)`. */
const threadLabel = (id: string, namespace: string) => `thread ${id}${namespace ? ` (namespace ${namespace})` : ""}`;
/** `3 repairs`, `1 repair`. */
export const many = (n: number, what: string) => `${num(n)} ${what}${n === 1 ? "" : "s"}`;
const bump = <K>(counts: Map<K, number>, key: K) => counts.set(key, (counts.get(key) ?? 0) + 1);
/** Counted names: `a, b x2`. */
const counted = (counts: Map<string, number>) =>
  [...counts].map(([name, n]) => (n > 1 ? `${name} x${num(n)}` : name)).join(", ");
/** Problem kinds with their rules, counted: `consecutive_same_role (B6)`. */
const kindsOf = (problems: ToolCallProblem[], counts = new Map<string, number>()) =>
  problems.reduce((counts, p) => bump(counts, p.rules.length ? `${p.kind} (${p.rules.join(", ")})` : p.kind), counts);

/** What the middleware must still do per request: a plain agent of that provider is refused without it. */
const SHAPED_BY = "toolCallRepairMiddleware / toolCallRepairHook";
const requestsTo = (provider?: Provider) =>
  provider === "strict" ? "requests to some providers" : `${provider} requests`;

/**
 * The lines printed for one thread (text mode): a repair's fix or why there is none, a scan's unreadable thread;
 * none for threads with nothing to say.
 */
export function renderThread(r: Report, verbose = false) {
  const where = threadLabel(r.threadId, r.namespace);
  if (r.status !== "would_repair" && r.status !== "repaired") {
    const says = ({ skipped: "skipped", failed: "FAILED", unreadable: "unreadable, skipped" } as Dict)[r.status];
    return says ? [`${where}: ${says}: ${"found" in r ? r.reason : r.error}`] : [];
  }
  let done = many(r.repairs.length, "repair");
  if (r.salvaged.length) done += `, ${many(r.salvaged.length, "real result")} put back from pending writes`;
  const lines = [
    r.status === "repaired"
      ? `${where}: repaired (${done}); new checkpoint ${r.written?.configurable?.checkpoint_id} on top of ${r.checkpointId}`
      : `${where}: would repair (${done}) on top of checkpoint ${r.checkpointId}`,
  ];
  if (r.reshape.length)
    lines.push(
      `  then fine with the middleware: ${requestsTo(r.provider)} need ${SHAPED_BY} (request shaping, never stored)` +
        (verbose ? `: ${counted(kindsOf(r.reshape))}` : ""),
    );
  return lines;
}

/** A revert's line for one thread. */
export function renderRevert(r: RevertReport) {
  const where = threadLabel(r.thread, r.namespace);
  return r.status === "reverted"
    ? `${where}: reverted; new checkpoint ${r.revertedTo} holds what ${r.previousCheckpointId} held`
    : `${where}: ${r.status}: ${r.reason}`;
}

const pick = <T>(o: T, keys: (keyof T)[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));
const problemJson = (p: ToolCallProblem) => pick(p, ["kind", "index", "toolCallId", "toolName", "rules"]);

/** One JSON line per thread: a scan's report, or a repair's (which has `found`). Empty ids and names are left out. */
export function reportJson(report: Report) {
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
// Summary: counts only.

export class Tally {
  threads = 0;
  /** Threads per status found and, for repair, per outcome (`unreadable`, which is both, counted once). */
  counts = new Map<string, number>();
  /** Problems per kind. */
  kinds = new Map<string, number>();
  /** Threads per provider judged for and where it came from (`bedrock (read from the thread)`). */
  judged = new Map<string, number>();
  /** Per provider: the threads a request still needs shaping for (after their repair), and their problems. */
  reshape = new Map<Provider, [threads: number, kinds: Map<string, number>]>();

  add(report: Report) {
    this.threads++;
    const { status, provider } = report;
    const found = "found" in report ? report.found : status;
    bump(this.counts, found);
    if (status !== found) bump(this.counts, status);
    // The problems that break a thread; request shaping is said per provider below.
    if (found === "broken") for (const p of report.problems) bump(this.kinds, p.kind);
    if (!provider) return;
    bump(this.judged, `${provider} (${PROVIDER_FROM[report.providerFrom ?? "default"]})`);
    // A scan's thread that is not broken has problems of request shaping only.
    const reshape = "reshape" in report ? report.reshape : report.problems;
    if (reshape.length && (found !== "broken" || status === "repaired" || status === "would_repair")) {
      const [threads, kinds] = this.reshape.get(provider) ?? [0, new Map<string, number>()];
      this.reshape.set(provider, [threads + 1, kindsOf(reshape, kinds)]);
    }
  }

  count(status: string) {
    return this.counts.get(status) ?? 0;
  }
}

const PROVIDER_FROM = { option: "--provider", thread: "read from the thread", default: "default" };

const FOUND_LINES = {
  clean: "clean",
  broken: "broken (repair fixes these)",
  reshape: "fine with the middleware (nothing to repair; its shaping of each request is needed)",
  open: "end on calls a resume may still run (left alone)",
  no_messages: "no message list",
  unreadable: "unreadable (skipped)",
};

const OUTCOME_LINES = {
  repaired: "repaired (new checkpoint on top)",
  would_repair: "would be repaired (dry run)",
  skipped: "skipped",
  failed: "failed",
};

export function renderSummary(
  tally: Tally,
  { label, stopped, repair, next }: { label: string; stopped?: string; repair: boolean; next: boolean },
  verbose = false,
) {
  const lines = [`${label}: ${many(tally.threads, "thread")} read`];
  if (stopped) lines.push(`Stopped early: ${stopped}`);
  const width = num(Math.max(0, ...tally.counts.values())).length;
  // Clean and broken are said even when none.
  const counts = (texts: Record<string, string>, always = 0) =>
    Object.entries(texts).flatMap(([status, text], i) => {
      const n = tally.count(status);
      return n || i < always ? [`  ${num(n).padStart(width)}  ${text}`] : [];
    });
  // A repair counts what it read: the broken threads it then repaired are counted under "Repair:".
  lines.push(...counts(repair ? { ...FOUND_LINES, broken: "broken when read" } : FOUND_LINES, 2));
  if (repair)
    lines.push("Repair:", ...counts(OUTCOME_LINES), ...(tally.count("broken") ? [] : ["  nothing to repair"]));
  if (tally.kinds.size) lines.push(`Problems${repair ? " found" : ""}: ${counted(tally.kinds)}`);
  for (const [provider, [threads, kinds]] of tally.reshape)
    lines.push(
      `${many(threads, "thread")} ${threads === 1 ? "is" : "are"} fine with ${SHAPED_BY}, which shapes ` +
        `${requestsTo(provider)}; a plain agent's are refused${verbose ? `: ${counted(kinds)}` : " (--verbose names the rules)"}`,
    );
  if (tally.judged.size)
    lines.push(`Judged for: ${[...tally.judged].map(([judged, n]) => `${judged} ${num(n)}`).join(", ")}`);
  if (next)
    lines.push(
      repair
        ? "Next: the same command with --apply writes these fixes"
        : "Next: repair with the same flags shows each fix (a dry run; add --apply to write it)",
    );
  return lines;
}
