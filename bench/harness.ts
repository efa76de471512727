/**
 * A small side-by-side timer: candidates run interleaved in the same rounds (so drift in machine load hits
 * them alike), each round timed over many iterations, and the median round reported. Ratios are computed
 * from medians of the same run.
 */
export interface Candidate {
  name: string;
  fn: () => unknown;
}

export interface Timing {
  name: string;
  /** Median nanoseconds per call. */
  nsPerCall: number;
  /** The fastest round's nanoseconds per call: on a shared machine, the round least disturbed by other work. */
  best: number;
}

let sink: unknown;

/**
 * Nanoseconds now: wall-clock time, or with `cpu` the process's CPU time (microsecond resolution), which the time
 * spent waiting for a core on a shared machine does not inflate.
 */
function now(cpu: boolean): number {
  if (!cpu) return Number(process.hrtime.bigint());
  const { user, system } = process.cpuUsage();
  return (user + system) * 1e3;
}

function timeRound(fn: () => unknown, iterations: number, cpu = false): number {
  const start = now(cpu);
  for (let i = 0; i < iterations; i++) sink = fn();
  return (now(cpu) - start) / iterations;
}

/** Picks an iteration count so one round of the slowest candidate takes about `targetMs`. */
function calibrate(candidates: Candidate[], targetMs: number, cpu: boolean): number {
  let iterations = 1;
  for (;;) {
    const worst = Math.max(...candidates.map((c) => timeRound(c.fn, iterations, cpu)));
    if (worst * iterations >= targetMs * 1e6 || iterations >= 1 << 20) return iterations;
    iterations *= 2;
  }
}

export function compare(
  candidates: Candidate[],
  { rounds = 15, targetMs = 20, cpu = false, warmMs = 0 } = {},
): Timing[] {
  // Warm up the JIT: three calls, or each candidate for `warmMs` (so the optimizing compiler has run on the first case too).
  for (const c of candidates) for (let i = 0, end = Date.now() + warmMs; i < 3 || Date.now() < end; i++) sink = c.fn();
  const iterations = calibrate(candidates, targetMs, cpu);
  const samples = candidates.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    // Alternate the order each round so neither candidate always runs first.
    const order = r % 2 === 0 ? candidates.map((_, i) => i) : candidates.map((_, i) => candidates.length - 1 - i);
    for (const i of order) samples[i].push(timeRound(candidates[i].fn, iterations, cpu));
  }
  return candidates.map((c, i) => ({ name: c.name, nsPerCall: median(samples[i]), best: Math.min(...samples[i]) }));
}

export async function compareAsync(
  candidates: { name: string; fn: () => Promise<unknown> }[],
  { rounds = 15, iterations = 50 } = {},
): Promise<Timing[]> {
  for (const c of candidates) for (let i = 0; i < 5; i++) sink = await c.fn();
  const samples = candidates.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? candidates.map((_, i) => i) : candidates.map((_, i) => candidates.length - 1 - i);
    for (const i of order) {
      const start = process.hrtime.bigint();
      for (let k = 0; k < iterations; k++) sink = await candidates[i].fn();
      samples[i].push(Number(process.hrtime.bigint() - start) / iterations);
    }
  }
  return candidates.map((c, i) => ({ name: c.name, nsPerCall: median(samples[i]), best: Math.min(...samples[i]) }));
}

export function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const fmt = (ns: number) =>
  ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(1)} µs` : `${ns.toFixed(0)} ns`;

export function keepAlive(): unknown {
  return sink;
}
