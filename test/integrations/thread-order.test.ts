/**
 * No lost update in one process (src/integrations/thread-order.ts): the run after an aborted one sees the
 * aborted run's last writes, and a write of an aborted run never becomes the head over a newer turn.
 *
 * An aborted invoke() rejects while LangGraph is still writing the run's last checkpoints; the next run is
 * started right after the rejection. Two ways: the aborted run's writes held back below the wrapper until the
 * next run has started (the order is then the same on every saver, in every durability mode), and the abort
 * sweep's `immediate` cases, where the next run simply starts at once (the writes land during it on PostgreSQL).
 * The model is the real ChatOpenAI against the strict stub; what it was sent is checked too.
 */
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findToolCallProblems } from "../../src/engine";
import { withToolCallRepair } from "../../src/integrations/checkpointer";
import { idRightAfter, orderedSaverMethods } from "../../src/integrations/thread-order";
import { postgresSkipReason } from "../support/services";
import { openAIModel, startOpenAIStub } from "../support/stubs";
import {
  buildSurface,
  DURABILITIES,
  gateWrites,
  HeldTools,
  openSaver,
  runSweepCase,
  TOOL_NAMES,
  type AbortPoint,
  type Continuation,
  type Durability,
  type SaverName,
  type Surface,
  type SweepCase,
} from "./support/abort-sweep";

const postgresSkip = await postgresSkipReason();
const SAVERS: { name: SaverName; skip?: string }[] = [
  { name: "MemorySaver" },
  { name: "SqliteSaver" },
  { name: "PostgresSaver", skip: postgresSkip },
];
const skipNote = (skip?: string) => (skip ? ` (skipped: ${skip})` : "");
const OPENAI = { provider: "openai" } as const;
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("idRightAfter", () => {
  const hex = (digits: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${digits}}$`));
  const uuid6 = fc
    .tuple(hex(8), hex(4), hex(3), fc.constantFrom("8", "9", "a", "b"), hex(3), hex(12))
    .map(([high, mid, low, variant, seq, node]) => `${high}-${mid}-6${low}-${variant}${seq}-${node}`);

  it("sorts right after the parent, before any id with a later timestamp, and keeps the uuid's version and variant", () => {
    fc.assert(
      fc.property(uuid6, uuid6, (parent, other) => {
        const next = idRightAfter(parent);
        if (next === undefined) return; // the step would carry into the timestamp (about once in a billion)
        expect(next > parent).toBe(true);
        expect(next.slice(0, 19)).toBe(parent.slice(0, 19)); // timestamp and version
        expect("89ab").toContain(next[19]); // variant
        expect(next).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        if (other.slice(0, 18) > parent.slice(0, 18)) expect(next < other).toBe(true);
      }),
    );
  });

  it("is undefined for an id that is not a uuid", () => {
    expect(idRightAfter("checkpoint-1")).toBeUndefined();
  });
});

/** What must hold after the aborted run and the next one: both user messages once, in order; valid; answered. */
describe("a run first seen aborted", () => {
  // createAgent reads the thread with one signal and runs its loop with another, first seen once the first is
  // aborted: that run comes right after the thread's last abort, so its first read waits for the aborted run's
  // write still under way (a time equal to the abort's would not: an aborted run waits only for runs before it).
  it("waits for the earlier aborted run of its thread before its first read", async () => {
    const log: string[] = [];
    let land = () => {};
    const saver = {
      getTuple: async () => void log.push("read"),
      get: async () => undefined,
      put: (config: RunnableConfig) =>
        new Promise<RunnableConfig>((resolve) => {
          land = () => (log.push("put"), resolve(config));
        }),
      putWrites: async () => {},
    };
    const methods = orderedSaverMethods(saver, saver);
    const config = (signal: AbortSignal) => ({ configurable: { thread_id: "t", checkpoint_ns: "" }, signal });
    const first = new AbortController();
    await methods.getTuple(config(first.signal));
    const put = methods.put(config(first.signal), { id: "c1" } as never, {} as never, {});
    first.abort();
    const read = methods.getTuple(config(AbortSignal.abort())).then(() => log.push("second read"));
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(["read"]);
    land();
    await Promise.all([put, read]);
    expect(log).toEqual(["read", "put", "read", "second read"]);
  });
});

function judge(stored: BaseMessage[], continuation: Continuation, secondError: string | undefined): string[] {
  const failures: string[] = [];
  if (secondError) failures.push(`next run threw: ${secondError.split("\n")[0]}`);
  const humans = stored.filter((m) => HumanMessage.isInstance(m)).map((m) => m.id);
  const expected = continuation === "new input" ? ["h-first", "h-second"] : ["h-first"];
  if (JSON.stringify(humans) !== JSON.stringify(expected)) {
    failures.push(`user messages ${JSON.stringify(humans)}, sent ${JSON.stringify(expected)}`);
  }
  const problems = findToolCallProblems(stored, { provider: "openai" });
  if (problems.length > 0) failures.push(`stored thread invalid: ${problems.map((p) => p.kind).join(",")}`);
  if (!secondError && !AIMessage.isInstance(stored.at(-1))) failures.push("thread does not end on the answer");
  return failures;
}

/**
 * A run aborted at `point` whose writes issued after the abort are held below the wrapper until the next run
 * (a new input or a resume) has started and had time to read; then they land.
 */
async function heldLateWrites(
  saverName: SaverName,
  surface: Surface,
  durability: Durability,
  point: AbortPoint,
  continuation: Continuation,
) {
  const handle = await openSaver(saverName, "order");
  const stub = await startOpenAIStub({
    script: (request) => {
      const messages = (request as { messages: { role: string }[] }).messages;
      const calls = TOOL_NAMES.map((n) => ({ name: n, args: { q: n } }));
      return messages.at(-1)?.role === "user" ? { toolCalls: calls } : { text: "answer" };
    },
  });
  const gate = gateWrites(handle.saver);
  try {
    const tools = new HeldTools();
    const graph = buildSurface(surface, openAIModel(stub), tools, withToolCallRepair(gate.saver, OPENAI), OPENAI);
    const config = { configurable: { thread_id: "t" }, durability };
    const controller = new AbortController();
    if (point === "before first step") {
      gate.hold();
      controller.abort();
    }
    const firstInput = { messages: [new HumanMessage({ content: "first", id: "h-first" })] };
    const first = graph.invoke(firstInput, { ...config, signal: controller.signal });
    if (point === "tools 1/3") {
      await tools.when(() => tools.started.length === 3);
      tools.release(tools.started[0]);
      await tools.when(() => tools.completed.size === 1);
      await turns(20); // the finished call's write is issued (and, unless held, stored)
      gate.hold();
      controller.abort();
    }
    await expect(first).rejects.toThrow(/abort/i);
    tools.hold = false;
    const rejectionsBefore = stub.rejections.length;
    const requestsBefore = stub.requests.length;
    const secondInput =
      continuation === "new input" ? { messages: [new HumanMessage({ content: "second", id: "h-second" })] } : null;
    const second = graph.invoke(secondInput, config).then(
      () => undefined,
      (error: Error) => error.message,
    );
    await turns(20);
    gate.release();
    const secondError = await second;
    await turns(20);
    const tuple = await handle.saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: "" } });
    const stored = (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
    const failures = judge(stored, continuation, secondError);
    // What the model was sent in the next run: a resume continues the first question. (After a new input the
    // run's own list lacks a message LangGraph dropped from `__start__`: the wrapper puts it back in storage only.)
    const sent = stub.requests.slice(requestsBefore).map((body) => JSON.stringify(body));
    const asked = continuation === "resume" ? '"first"' : '"second"';
    if (!secondError && (sent.length === 0 || !sent.every((body) => body.includes(asked)))) {
      failures.push(`a model request of the next run lacks ${asked}`);
    }
    if (stub.rejections.length > rejectionsBefore)
      failures.push(`provider rejected: ${stub.rejections.map((r) => r.rule).join(",")}`);
    return failures;
  } finally {
    gate.release();
    await stub.close();
    await handle.dispose();
  }
}

describe.each(SAVERS)("the run after an abort, on a wrapped $name", ({ name, skip }) => {
  describe.skipIf(skip !== undefined)(`writes of the aborted run land late${skipNote(skip)}`, () => {
    for (const durability of DURABILITIES) {
      for (const continuation of ["new input", "resume"] as const) {
        it(`${durability} | abort before first step | ${continuation}: the next run sees the aborted run's message`, async () => {
          expect(
            await heldLateWrites(name, "createAgent+middleware", durability, "before first step", continuation),
          ).toEqual([]);
        });
      }
    }
    // With "sync" and "async" the step's checkpoint is stored before its tools run; with "exit" the run's only
    // write comes after the abort.
    it("exit | abort after 1 of 3 tools | resume: the next run resumes from the aborted run's only checkpoint", async () => {
      expect(await heldLateWrites(name, "StateGraph+node", "exit", "tools 1/3", "resume")).toEqual([]);
    });
  });
});

/** Points where the aborted run still has writes to make after its invoke() rejects (in some durability mode). */
const IMMEDIATE_POINTS: AbortPoint[] = [
  "before first step",
  "first model call",
  "tools 1/3",
  "tools 2/3",
  "second model call",
];

describe.each(SAVERS)("the abort sweep's next run started at once, on a wrapped $name", ({ name, skip }) => {
  // Nothing held back: the next run starts as soon as the aborted invoke() rejects (the sweep's `immediate`).
  // On PostgreSQL the aborted run's writes then land during the next run in every durability mode; on
  // MemorySaver and SqliteSaver with "exit".
  describe.skipIf(skip !== undefined).each(DURABILITIES)(`%s${skipNote(skip)}`, (durability) => {
    it.each(["createAgent+middleware", "StateGraph+node"] as const)(
      "%s: every abort point, a new input and a resume",
      async (surface) => {
        const handle = await openSaver(name, "immediate");
        try {
          const failures: string[] = [];
          let thread = 0;
          for (const point of IMMEDIATE_POINTS) {
            for (const continuation of ["new input", "resume"] as const) {
              const c: SweepCase = {
                ...{ saver: name, surface, wrap: true, durability, point, continuation },
                ...{ immediate: true, repairOptions: OPENAI },
              };
              const outcome = await runSweepCase(c, handle.saver, `immediate-${++thread}`);
              if (outcome.failures.length > 0) failures.push(`${outcome.name}: ${outcome.failures.join("; ")}`);
            }
          }
          expect(failures).toEqual([]);
        } finally {
          await handle.dispose();
        }
      },
    );
  });
});
