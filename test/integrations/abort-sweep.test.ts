/**
 * The abort sweep (support/abort-sweep.ts): a run with three parallel tool calls aborted at each point, then a
 * new input or a resume, on every surface, with and without the checkpointer wrapper, in every durability
 * mode, on MemorySaver, SqliteSaver and PostgresSaver (skipped with the reason when PostgreSQL is unreachable).
 * Surfaces and wrapper run with their default options, as a user first writes them.
 *
 * The second run starts once the first run's last writes have landed (see `immediate` in the harness; what
 * happens when it does not is pinned in checkpointer-known-failures.test.ts).
 *
 * A case that fails today for a known cause is an `it.fails` whose title names the cause; when the cause is
 * fixed, that case starts passing, the `it.fails` fails, and the table below must be updated.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresSkipReason } from "../support/services";
import {
  ABORT_POINTS,
  CONTINUATIONS,
  DURABILITIES,
  openSaver,
  runSweepCase,
  SURFACES,
  type SaverHandle,
  type SaverName,
  type SweepCase,
} from "./support/abort-sweep";

/**
 * Known causes, each with the cases it breaks.
 * - `start-dropped`: LangGraph, pregel/loop.js `_first` (about line 920): on a new input the pending
 *   `__start__` task is discarded and the new input overwrites the `__start__` channel, so a user message
 *   whose run was aborted before its first step is lost. The checkpointer wrapper puts it back; without it,
 *   nothing does.
 * (`strict-merge`, the strict profile's merge of two user messages stored by the persisting surfaces, is gone:
 * storage gets structural repairs only, and the merge is request shaping.)
 * - `no-wrapper`: by design of LangGraph (loop.js `_first` discards pending tasks on a new input): without
 *   the checkpointer wrapper nothing can see the finished siblings' pending writes, the surfaces close the
 *   calls with placeholders. Documented (docs/checkpointer.md); kept here so the sweep shows the difference.
 */
type Cause = "start-dropped" | "no-wrapper";

/** Surfaces whose tools run as one `Send` task per call, so a finished sibling's result is a pending write. */
const PER_CALL_TASKS = new Set(["createAgent+middleware", "StateGraph+node"]);

export function knownCauses(c: SweepCase): Cause[] {
  if (c.continuation !== "new input") return [];
  const causes: Cause[] = [];
  // Both points leave two user messages in a row (the wrapper puts the dropped one back before the new one).
  if (c.point === "before first step" && !c.wrap) causes.push("start-dropped");
  const siblingFinished = c.point === "tools 1/3" || c.point === "tools 2/3";
  if (siblingFinished && PER_CALL_TASKS.has(c.surface) && !c.wrap) causes.push("no-wrapper");
  return causes;
}

const postgresSkip = await postgresSkipReason();
const SAVERS: { name: SaverName; skip?: string }[] = [
  { name: "MemorySaver" },
  { name: "SqliteSaver" },
  { name: "PostgresSaver", skip: postgresSkip },
];

describe.each(SAVERS)("abort sweep on $name", ({ name, skip }) => {
  let handle: SaverHandle | undefined;
  beforeAll(async () => {
    if (!skip) handle = await openSaver(name, "sweep");
  });
  afterAll(async () => {
    await handle?.dispose();
  });

  let thread = 0;
  describe.skipIf(skip !== undefined).each(SURFACES)(`%s${skip ? ` (skipped: ${skip})` : ""}`, (surface) => {
    for (const wrap of [false, true]) {
      for (const durability of DURABILITIES) {
        for (const point of ABORT_POINTS) {
          for (const continuation of CONTINUATIONS) {
            const c: SweepCase = { saver: name, surface, wrap, durability, point, continuation };
            const causes = knownCauses(c);
            const title = `${wrap ? "wrapped" : "bare"} | ${durability} | abort ${point} | ${continuation}`;
            const run = async () => {
              const outcome = await runSweepCase(c, handle!.saver, `sweep-${++thread}`);
              expect(outcome.failures).toEqual([]);
            };
            if (causes.length === 0) it(title, run);
            else it.fails(`${title} [known: ${causes.join(", ")}]`, run);
          }
        }
      }
    }
  });
});
