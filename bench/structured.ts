/**
 * Structured-output parsing on hostile answers: the time of `answerCandidates` (the whole text, bracket spans, JSON.parse)
 * and of `parseStructuredAnswer` (the same, plus validation) as the answer grows 10x. Linear code shows a ratio
 * near 10x per step; a quadratic scan would show about 100x.
 */
import { z } from "zod";
import { outputFormatOf } from "../src/structured/format";
import { answerCandidates, parseStructuredAnswer } from "../src/structured/parse";
import { compare, compareAsync, fmt } from "./harness";

const VALUE = '{"city":"Paris","tempC":21}';
const weather = outputFormatOf(z.object({ city: z.string(), tempC: z.number() }));

/** Hostile answers of about `size` characters. */
const INPUTS: { name: string; make(size: number): string }[] = [
  { name: "'{' repeated", make: (n) => "{".repeat(n) },
  { name: "'{\"' repeated", make: (n) => '{"'.repeat(n / 2) },
  { name: "unclosed brackets, then a value", make: (n) => `${"{ [ ".repeat(n / 4)}${VALUE}` },
  { name: "unclosed ``` fence, then a long word", make: (n) => `\`\`\`${"a".repeat(n)}` },
  { name: "prose, then a value", make: (n) => `${"It is sunny in Paris. ".repeat(n / 22)}${VALUE}` },
];

const SIZES = [2_000, 20_000, 200_000];

export async function runStructuredBench(): Promise<string[]> {
  const lines: string[] = [];
  lines.push("## Structured output: parsing hostile answers (time per answer; ratio to the size 10x smaller)");
  lines.push("");
  lines.push(`| answer | ${SIZES.map((s) => `${s.toLocaleString("en")} chars`).join(" | ")} | ratios |`);
  lines.push(`|---|${SIZES.map(() => "---:").join("|")}|---:|`);
  for (const input of INPUTS) {
    const texts = SIZES.map((size) => input.make(size));
    const timings = compare(
      texts.map((text, i) => ({ name: String(SIZES[i]), fn: () => answerCandidates(text) })),
      { rounds: 7, targetMs: 10 },
    );
    lines.push(
      `| answerCandidates: ${input.name} | ${timings.map((t) => fmt(t.nsPerCall)).join(" | ")} | ${ratios(timings)} |`,
    );
  }
  const prose = SIZES.map((size) => INPUTS[4].make(size));
  const parsed = await compareAsync(
    prose.map((text, i) => ({ name: String(SIZES[i]), fn: () => parseStructuredAnswer(text, weather) })),
    { rounds: 7, iterations: 10 },
  );
  lines.push(
    `| parseStructuredAnswer: prose, then a value | ${parsed.map((t) => fmt(t.nsPerCall)).join(" | ")} | ${ratios(parsed)} |`,
  );
  return lines;
}

function ratios(timings: { nsPerCall: number }[]): string {
  return timings
    .slice(1)
    .map((t, i) => `${(t.nsPerCall / timings[i].nsPerCall).toFixed(1)}x`)
    .join(", ");
}
