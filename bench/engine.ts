/**
 * Engine benchmarks: the clean path against a bare loop that only reads every location a tool call id can
 * live in, independence from content size, and the broken path's per-message cost at each size.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { repairToolCalls } from "../src/engine";
import { brokenHistory, cleanHistory } from "./histories";
import { compare, fmt } from "./harness";

type Dict = Record<string, unknown>;

/** The floor: read every place a tool call id can live, and nothing else. */
export function bareLoop(messages: readonly BaseMessage[]): number {
  let ids = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as unknown as Dict;
    const calls = m.tool_calls as Dict[] | undefined;
    if (calls) for (let k = 0; k < calls.length; k++) if (calls[k].id) ids++;
    const invalid = m.invalid_tool_calls as Dict[] | undefined;
    if (invalid) for (let k = 0; k < invalid.length; k++) if (invalid[k].id) ids++;
    const kwargs = m.additional_kwargs as Dict | undefined;
    if (kwargs) {
      const raw = kwargs.tool_calls as Dict[] | undefined;
      if (raw) for (let k = 0; k < raw.length; k++) if (raw[k].id) ids++;
      if (kwargs.tool_use) ids++;
      if (kwargs.toolUse) ids++;
    }
    const content = m.content;
    if (Array.isArray(content))
      for (let k = 0; k < content.length; k++) {
        const block = content[k] as Dict;
        if (block.id || block.toolUse) ids++;
      }
    const meta = m.response_metadata as Dict | undefined;
    if (meta && Array.isArray(meta.output)) for (let k = 0; k < meta.output.length; k++) if ((meta.output[k] as Dict).call_id) ids++;
    if (m.tool_call_id) ids++;
  }
  return ids;
}

export function runEngineBench(): string[] {
  const lines: string[] = [];
  lines.push("## Engine: clean path (repairToolCalls on a valid history) vs a bare loop over every call-id location");
  lines.push("");
  lines.push("First check: two different histories alternate, so nothing is remembered between calls. Re-check: the");
  lines.push("same history again (the clean walk resumes where it stopped, as before each model call of a tool loop).");
  lines.push("");
  lines.push("| messages | bare loop | first check | ratio | re-check | ratio | same array |");
  lines.push("|---:|---:|---:|---:|---:|---:|:---:|");
  for (const size of [100, 1_000, 10_000]) {
    const a = cleanHistory(size);
    const b = cleanHistory(size);
    let flip = false;
    const [bare, cold, warm] = compare([
      { name: "bare", fn: () => bareLoop((flip = !flip) ? a : b) },
      { name: "first check", fn: () => repairToolCalls((flip = !flip) ? a : b) },
      { name: "re-check", fn: () => repairToolCalls(a) },
    ]);
    const same = repairToolCalls(a).messages === a && repairToolCalls(b).messages === b;
    const r = (t: { nsPerCall: number }) => `${(t.nsPerCall / bare.nsPerCall).toFixed(2)}x`;
    lines.push(`| ${size.toLocaleString("en")} | ${fmt(bare.nsPerCall)} | ${fmt(cold.nsPerCall)} | ${r(cold)} | ${fmt(warm.nsPerCall)} | ${r(warm)} | ${same ? "yes" : "NO"} |`);
  }

  lines.push("");
  lines.push("## Engine: clean path (first check) against tool result size (1,000 messages)");
  lines.push("| results of | repairToolCalls | ratio to 100 B |");
  lines.push("|---:|---:|---:|");
  const bySize = [100, 10_000, 100_000].map((bytes) => ({ bytes, h: [cleanHistory(1_000, () => bytes), cleanHistory(1_000, () => bytes)] }));
  let turn = 0;
  // Two histories alternate so that every call is a first check.
  const timings = compare(bySize.map(({ bytes, h }) => ({ name: String(bytes), fn: () => repairToolCalls(h[turn++ & 1]) })));
  timings.forEach((t, i) =>
    lines.push(`| ${bySize[i].bytes.toLocaleString("en")} B | ${fmt(t.nsPerCall)} | ${(t.nsPerCall / timings[0].nsPerCall).toFixed(2)}x |`),
  );

  lines.push("");
  lines.push("## Engine: broken path (about 5% of messages involved in a problem)");
  lines.push("| messages | repairs | repairToolCalls | per message |");
  lines.push("|---:|---:|---:|---:|");
  for (const size of [100, 1_000, 10_000]) {
    const h = brokenHistory(size);
    const repairs = repairToolCalls(h).repairs.length;
    const [t] = compare([{ name: "broken", fn: () => repairToolCalls(h) }], { rounds: 7 });
    lines.push(`| ${size.toLocaleString("en")} | ${repairs} | ${fmt(t.nsPerCall)} | ${fmt(t.nsPerCall / h.length)} |`);
  }
  return lines;
}
