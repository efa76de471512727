/**
 * Summarization and trimming as the history grows 10x: the safe boundary (by message count and by token
 * budget), the transcript, `trimMessagesSafely`, and `safeWindow` on a chain where every move uncovers the next
 * split exchange (the step-by-step loop it replaced rescanned the window each time). Linear code shows a ratio
 * near 10x per step (n log n: about 12x for the token budget, whose binary search counts O(log n) copies); a
 * quadratic one, about 100x. core's own `trimMessages` is shown for comparison where it finishes in time.
 */
import { AIMessage, ToolMessage, trimMessages, type BaseMessage } from "@langchain/core/messages";
import { approximateTokenCounter, findSafeSummarizationBoundary } from "../src/summarize/boundary";
import { messagesToTranscript } from "../src/summarize/summarize";
import { safeWindow, trimMessagesSafely } from "../src/summarize/trim";
import { compare, compareAsync, fmt, type Timing } from "./harness";
import { cleanHistory } from "./histories";

const SIZES = [1_000, 10_000, 100_000];
/** Small results, so that the rows measure the walk over messages rather than copying text. */
const smallResults = () => 200;

/** ai(c0) ai(c1) r(c0) ai(c2) r(c1) ...: each result answers the call two messages back. */
function chain(size: number): BaseMessage[] {
  const out: BaseMessage[] = [
    new AIMessage({ content: "", tool_calls: [{ id: "c0", name: "f", args: {}, type: "tool_call" }] }),
  ];
  for (let k = 1; out.length < size; k++)
    out.push(
      new AIMessage({ content: "", tool_calls: [{ id: `c${k}`, name: "f", args: {}, type: "tool_call" }] }),
      new ToolMessage({ content: "r", tool_call_id: `c${k - 1}` }),
    );
  return out;
}

function ratios(timings: Timing[]): string {
  return timings
    .slice(1)
    .map((t, i) => `${(t.nsPerCall / timings[i].nsPerCall).toFixed(1)}x`)
    .join(", ");
}

export async function runSummarizeBench(): Promise<string[]> {
  const lines: string[] = [];
  lines.push("## Summarization and trimming as the history grows (time per call; ratio to the size 10x smaller)");
  lines.push("");
  lines.push(`| operation | ${SIZES.map((s) => `${s.toLocaleString("en")} messages`).join(" | ")} | ratios |`);
  lines.push(`|---|${SIZES.map(() => "---:").join("|")}|---:|`);
  const histories = SIZES.map((size) => cleanHistory(size, smallResults));
  const row = (name: string, timings: Timing[]) =>
    lines.push(`| ${name} | ${timings.map((t) => fmt(t.nsPerCall)).join(" | ")} | ${ratios(timings)} |`);
  const sync = (name: string, fn: (h: BaseMessage[], i: number) => unknown) =>
    row(
      name,
      compare(
        histories.map((h, i) => ({ name: String(SIZES[i]), fn: () => fn(h, i) })),
        { rounds: 5, targetMs: 20 },
      ),
    );

  sync("findSafeSummarizationBoundary, keepLast 20", (h) => findSafeSummarizationBoundary(h, { keepLast: 20 }));
  sync("findSafeSummarizationBoundary, maxTokens 2,000 (approximateTokenCounter)", (h) =>
    findSafeSummarizationBoundary(h, { maxTokens: 2_000, tokenCounter: approximateTokenCounter }),
  );
  sync("messagesToTranscript", (h) => messagesToTranscript(h));
  const chains = SIZES.map(chain);
  row(
    "safeWindow on a chain of split exchanges",
    compare(
      chains.map((h, i) => ({ name: String(SIZES[i]), fn: () => safeWindow(h, { start: 0, end: h.length - 1 }) })),
      { rounds: 5, targetMs: 20 },
    ),
  );
  const trimOptions = { maxTokens: 2_000, tokenCounter: approximateTokenCounter, strategy: "last" as const };
  row(
    "trimMessagesSafely, last 2,000 tokens",
    await compareAsync(
      histories.map((h, i) => ({ name: String(SIZES[i]), fn: () => trimMessagesSafely(h, trimOptions) })),
      { rounds: 5, iterations: 2 },
    ),
  );

  // core drops one message per count (quadratic): 10,000 messages take about a minute a call, so it is shown
  // on smaller histories, doubling.
  lines.push("");
  lines.push("core's own `trimMessages` with the same options, for comparison (ratio to the size 2x smaller):");
  lines.push("");
  const coreSizes = [250, 500, 1_000];
  lines.push(`| operation | ${coreSizes.map((s) => `${s.toLocaleString("en")} messages`).join(" | ")} | ratios |`);
  lines.push(`|---|${coreSizes.map(() => "---:").join("|")}|---:|`);
  const small = coreSizes.map((size) => cleanHistory(size, smallResults));
  const timing = (fn: (h: BaseMessage[]) => Promise<unknown>) =>
    compareAsync(
      small.map((h, i) => ({ name: String(coreSizes[i]), fn: () => fn(h) })),
      { rounds: 3, iterations: 1 },
    );
  const coreRow = (name: string, timings: Timing[]) =>
    lines.push(`| ${name} | ${timings.map((t) => fmt(t.nsPerCall)).join(" | ")} | ${ratios(timings)} |`);
  coreRow("core trimMessages", await timing((h) => trimMessages(h, trimOptions)));
  coreRow("trimMessagesSafely", await timing((h) => trimMessagesSafely(h, trimOptions)));
  return lines;
}
