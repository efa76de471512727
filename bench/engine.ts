/**
 * Engine benchmarks, on the built package (what users run):
 * - the clean check and the repair in every provider profile, side by side in one run with the previous release, deepagents'
 *   patch middleware and a bare loop that only reads every location a tool call id can live in;
 * - independence from the size of tool results;
 * - linear growth where an attacker (or a server that reuses ids) would look for a quadratic blow-up: one id
 *   shared by every call, one message with a huge fan-out, ids crafted to collide in a hash.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { createRepairer, repairToolCalls } from "./pkg";
import { brokenHistory, cleanHistory } from "./histories";
import { compare, fmt } from "./harness";
import { BASELINE, loadBaseline } from "./baseline";
import { deepagentsPatch } from "./peers";

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
    if (meta && Array.isArray(meta.output))
      for (let k = 0; k < meta.output.length; k++) if ((meta.output[k] as Dict).call_id) ids++;
    if (m.tool_call_id) ids++;
  }
  return ids;
}

/** `n` assistant messages that all call the same id, each followed by its result (servers that reuse `call_0`). */
function sharedIdHistory(n: number): BaseMessage[] {
  const h: BaseMessage[] = [new HumanMessage({ content: "go", id: "h" })];
  for (let i = 0; i < n; i++) {
    h.push(
      new AIMessage({
        content: "",
        id: `a${i}`,
        tool_calls: [{ id: "call_0", name: "lookup", args: { i }, type: "tool_call" }],
      }),
    );
    h.push(new ToolMessage({ content: `result ${i}`, tool_call_id: "call_0", id: `t${i}` }));
  }
  return h;
}

/** One assistant message with `n` parallel calls, their results, then a new question (one result missing when `broken`). */
/** One call answered `n` times: every result after the first is a duplicate (Anthropic keeps each as user text). */
function duplicateResultsHistory(n: number): BaseMessage[] {
  const h: BaseMessage[] = [
    new HumanMessage({ content: "go", id: "h" }),
    new AIMessage({
      content: "",
      id: "a",
      tool_calls: [{ id: "call_0", name: "lookup", args: {}, type: "tool_call" }],
    }),
  ];
  for (let i = 0; i < n; i++) h.push(new ToolMessage({ content: `result ${i}`, tool_call_id: "call_0", id: `t${i}` }));
  return h;
}

function fanOutHistory(n: number, broken: boolean): BaseMessage[] {
  const calls = Array.from({ length: n }, (_, i) => ({
    id: `call_${i}`,
    name: "lookup",
    args: { i },
    type: "tool_call" as const,
  }));
  const h: BaseMessage[] = [
    new HumanMessage({ content: "go", id: "h" }),
    new AIMessage({ content: "", id: "a", tool_calls: calls }),
  ];
  for (let i = broken ? 1 : 0; i < n; i++)
    h.push(new ToolMessage({ content: `result ${i}`, tool_call_id: `call_${i}`, id: `t${i}` }));
  h.push(new AIMessage({ content: "done", id: "final" }));
  return h;
}

/**
 * Ids that pile up in a few buckets of the hash the clean walk used before (FNV over the characters, an
 * unseeded power-of-two table): the kind of input that made it 48 times slower. Found by brute force over short
 * ids of the id alphabet (all share their low 10 hash bits).
 */
function craftedIds(count: number): string[] {
  const oldHash = (id: string) => {
    let h = id.length;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    return (h ^ (h >>> 15)) >>> 0;
  };
  const mask = (1 << 10) - 1;
  const out: string[] = [];
  for (let n = 0; out.length < count; n++) {
    const id = `call_${n.toString(36)}`;
    if ((oldHash(id) & mask) === 0) out.push(id);
  }
  return out;
}

function distinctCallsHistory(ids: string[]): BaseMessage[] {
  const h: BaseMessage[] = [new HumanMessage({ content: "go", id: "h" })];
  ids.forEach((id, i) => {
    h.push(
      new AIMessage({ content: "", id: `a${i}`, tool_calls: [{ id, name: "lookup", args: {}, type: "tool_call" }] }),
    );
    h.push(new ToolMessage({ content: "r", tool_call_id: id, id: `t${i}` }));
  });
  return h;
}

const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

/** One case of the side-by-side table: a history per profile, and what each candidate does with it. */
interface Case {
  name: string;
  /** The budget against the bare loop (the issue's: 3x for a clean check, 20x for a repair). */
  budget: number;
  histories: (repair: (h: BaseMessage[]) => BaseMessage[]) => BaseMessage[][];
  clean: boolean;
}

const CASES: Case[] = [1_000, 10_000].flatMap((size) => [
  ...[100, 100_000].map((bytes) => ({
    name: `clean ${size.toLocaleString("en")}, results of ${bytes.toLocaleString("en")} B`,
    budget: 3,
    clean: true,
    // Two histories alternate, so nothing is remembered between checks; each one clean in the profile timed.
    histories: (repair: (h: BaseMessage[]) => BaseMessage[]) =>
      [0, 1].map(() => repair(cleanHistory(size, () => bytes))),
  })),
  { name: `broken ${size.toLocaleString("en")}`, budget: 20, clean: false, histories: () => [brokenHistory(size)] },
]);

const PROFILES = ["strict", "openai", "openai-responses", "anthropic", "bedrock", "gemini"] as const;

/**
 * This build against the previous release ({@link BASELINE}, built from git in a temporary folder), deepagents'
 * patch and the bare loop, on the same histories in one run, candidates alternating round by round
 * (`npm run bench -- release`: this table alone).
 */
export async function runEngineReleaseBench(): Promise<string[]> {
  const lines: string[] = [];
  const { commit, root: previous } = await loadBaseline();
  const { patch, version } = deepagentsPatch();
  lines.push(
    `## Engine: this build against the previous release (${commit.slice(0, 7)}), deepagents' patch and the bare loop`,
  );
  lines.push("");
  lines.push(
    "Clean: the clean check (`isClean`, what runs before every model call), two histories alternating. Broken: " +
      "`repair`, about 5% of the messages in a problem. deepagents " +
      `${version}: its patch middleware's \`patchDanglingToolCalls\` on the same history. Budget: the clean check at most 3x ` +
      "the bare loop, a repair at most 20x, never slower than deepagents. CPU time per call (a shared machine's waits " +
      "for a core left out), the best of alternating rounds; the median's ratio to the previous release in brackets. " +
      "Same: the clean histories come back as the same array from both builds; a repair reports what the previous one did.",
  );
  lines.push("");
  lines.push(
    "| profile | case | bare loop | deepagents | previous | now | now / loop | now / previous | now / deepagents | same | budget |",
  );
  lines.push("|---|---|---:|---:|---:|---:|---:|---:|---:|:---:|:---:|");
  for (const provider of PROFILES) {
    const now = createRepairer({ provider });
    const before = previous.createRepairer({ provider });
    for (const c of CASES) {
      const h = c.histories((x) => now.repair(x).messages);
      let turn = 0;
      const pick = () => h[turn++ % h.length];
      const run = c.clean ? (r: typeof now) => r.isClean(pick()) : (r: typeof now) => r.repair(pick());
      const [loop, peer, was, is] = compare(
        [
          { name: "loop", fn: () => bareLoop(pick()) },
          { name: "deepagents", fn: () => patch(pick()) },
          { name: "previous", fn: () => run(before) },
          { name: "now", fn: () => run(now) },
        ],
        { rounds: 9, targetMs: 10, cpu: true, warmMs: 100 },
      );
      const same = h.every((x) =>
        c.clean
          ? now.repair(x).messages === x && before.repair(x).messages === x
          : JSON.stringify(now.repair(x).repairs) === JSON.stringify(before.repair(x).repairs),
      );
      const within = is.best <= c.budget * loop.best && is.best <= peer.best;
      lines.push(
        `| ${provider} | ${c.name} | ${fmt(loop.best)} | ${fmt(peer.best)} | ${fmt(was.best)} | ${fmt(is.best)} | ` +
          `${ratio(is.best, loop.best)} | ${ratio(is.best, was.best)} (${ratio(is.nsPerCall, was.nsPerCall)}) | ` +
          `${ratio(is.best, peer.best)} | ${same ? "yes" : "NO"} | ${within ? "yes" : "over"} |`,
      );
    }
  }
  return lines;
}

export function runEngineBench(): string[] {
  const lines: string[] = [];
  const repairer = createRepairer();
  lines.push("");
  lines.push("## Engine: the clean path against tool result size (1,000 messages)");
  lines.push("| results of | clean check | ratio to 100 B |");
  lines.push("|---:|---:|---:|");
  const bySize = [100, 10_000, 100_000].map((bytes) => ({
    bytes,
    h: [cleanHistory(1_000, () => bytes), cleanHistory(1_000, () => bytes)],
  }));
  let turn = 0;
  const timings = compare(
    bySize.map(({ bytes, h }) => ({ name: String(bytes), fn: () => repairer.isClean(h[turn++ & 1]) })),
  );
  timings.forEach((t, i) =>
    lines.push(
      `| ${bySize[i].bytes.toLocaleString("en")} B | ${fmt(t.nsPerCall)} | ${ratio(t.nsPerCall, timings[0].nsPerCall)} |`,
    ),
  );

  lines.push("");
  lines.push("## Engine: linear where a quadratic blow-up would hide (each size 10x the one before)");
  lines.push("| case | size | repairToolCalls | growth for 10x |");
  lines.push("|---|---:|---:|---:|");
  const growth = (
    name: string,
    sizes: number[],
    build: (n: number) => BaseMessage[],
    run: (h: BaseMessage[]) => unknown,
  ) => {
    const histories = sizes.map(build);
    const t = compare(
      histories.map((h, i) => ({ name: String(sizes[i]), fn: () => run(h) })),
      { rounds: 5, targetMs: 50 },
    );
    t.forEach((x, i) =>
      lines.push(
        `| ${name} | ${sizes[i].toLocaleString("en")} | ${fmt(x.nsPerCall)} | ${i === 0 ? "" : ratio(x.nsPerCall, t[i - 1].nsPerCall)} |`,
      ),
    );
  };
  growth("calls sharing one id (every call renamed, with its result)", [1_000, 10_000], sharedIdHistory, (h) =>
    repairToolCalls(h),
  );
  growth("one call answered again and again (anthropic): repair", [10_000, 100_000], duplicateResultsHistory, (h) =>
    repairToolCalls(h, { provider: "anthropic" }),
  );
  growth(
    "parallel calls in one message, clean check",
    [10_000, 100_000],
    (n) => fanOutHistory(n, false),
    (h) => repairer.isClean(h),
  );
  growth(
    "parallel calls in one message, one result missing: repair",
    [10_000, 100_000],
    (n) => fanOutHistory(n, true),
    (h) => repairToolCalls(h),
  );

  lines.push("");
  lines.push("## Engine: ids crafted to collide in a hash, against ordinary ids (32,768 calls, clean check)");
  lines.push(
    "The clean walk keeps ids in an open-addressing table whose hash mixes in a random seed per " +
      "process, so ids built offline to collide in a hash (here: the unseeded one it used before) " +
      "collide in no table this package uses.",
  );
  lines.push("");
  lines.push("| ids | clean check | ratio to ordinary |");
  lines.push("|---|---:|---:|");
  const crafted = distinctCallsHistory(craftedIds(32_768));
  const ordinary = distinctCallsHistory(Array.from({ length: 32_768 }, (_, i) => `call_${(i * 7919).toString(36)}`));
  const [o, c] = compare(
    [
      { name: "ordinary", fn: () => repairer.isClean(ordinary) },
      { name: "crafted", fn: () => repairer.isClean(crafted) },
    ],
    { rounds: 9 },
  );
  lines.push(`| ordinary | ${fmt(o.nsPerCall)} | 1.00x |`);
  lines.push(`| crafted (one bucket of the old hash) | ${fmt(c.nsPerCall)} | ${ratio(c.nsPerCall, o.nsPerCall)} |`);
  return lines;
}
