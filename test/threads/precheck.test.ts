/**
 * The pre-check names exactly the threads the engine names: on generated stored threads (shaped as createAgent
 * and createReactAgent store them, clean and broken in every way the history generators know), serialized by
 * the savers' own serializer, a thread it calls clean is one the engine judges clean, and a scan or a repair
 * through the SQLite and PostgreSQL pages reports what the engine alone reports (a saver read only through
 * getTuple / list). It is not trivially conservative: the clean threads agents store pass it.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { emptyCheckpoint, JsonPlusSerializer, uuid6 } from "@langchain/langgraph-checkpoint";
import type { BaseCheckpointSaver, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PROVIDERS, type Provider } from "../../src/types";
import { cleanMessageCount, cleanStoredThread } from "../../src/threads/precheck";
import { judgeThread, scanThreads, type ThreadReport } from "../../src/threads/scan";
import { repairThreads, type ThreadRepairReport } from "../../src/threads/repair";
import { threadSourceFor } from "../../src/threads/source";
import {
  adapterBrokenPlanArb,
  applyCorruption,
  brokenPlanArb,
  buildValid,
  validPlanArb,
  type HistoryPlan,
} from "../support/histories";
import { postgresSaverOrSkip } from "../support/services";
import { seedThreads, startSeedModel } from "./support/seed";

const RUNS = Number(process.env.LGTR_FC_RUNS ?? 300);

/** How an agent's model and tool nodes dress the messages they store. */
interface Dress {
  /** createAgent names its model's messages "model"; createReactAgent leaves the name out. */
  agent: "createAgent" | "createReactAgent";
  /** ChatOpenAI keeps the raw calls in `additional_kwargs.tool_calls`. */
  rawCalls: boolean;
  status: "success" | "error" | undefined;
}

const dressArb: fc.Arbitrary<Dress> = fc.record({
  agent: fc.constantFrom("createAgent" as const, "createReactAgent" as const),
  rawCalls: fc.boolean(),
  status: fc.constantFrom("success" as const, "error" as const, undefined),
});

/** A plan's messages as the agent stored them: the model's and the tools' fields, then the plan's corruptions. */
function storedHistory(plan: HistoryPlan, dress: Dress): BaseMessage[] {
  const messages = buildValid(plan).map((m): BaseMessage => {
    if (AIMessage.isInstance(m)) {
      const calls = m.tool_calls ?? [];
      const raw = calls.map((c) => ({
        id: c.id ?? "",
        type: "function" as const,
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      }));
      return new AIMessage({
        id: m.id,
        content: m.content,
        tool_calls: calls,
        invalid_tool_calls: [],
        additional_kwargs: dress.rawCalls && raw.length > 0 ? { tool_calls: raw } : {},
        response_metadata: {
          finish_reason: calls.length > 0 ? "tool_calls" : "stop",
          model_provider: "openai",
          model_name: "gpt-4.1",
        },
        usage_metadata: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
        ...(dress.agent === "createAgent" ? { name: "model" } : {}),
      });
    }
    if (ToolMessage.isInstance(m))
      return new ToolMessage({
        content: m.content,
        tool_call_id: m.tool_call_id,
        name: m.name,
        id: m.id,
        status: dress.status,
      });
    return m;
  });
  plan.corruptions.forEach((c, serial) => applyCorruption(messages, c, serial));
  return messages;
}

/** Mostly without a system message, as agents store their threads (the prompt is added per request). */
const planArb: fc.Arbitrary<HistoryPlan> = fc
  .tuple(fc.oneof(validPlanArb, brokenPlanArb, adapterBrokenPlanArb), fc.nat(4))
  .map(([plan, system]) => ({ ...plan, system: plan.system && system === 0 }));

const serde = new JsonPlusSerializer();
const TS = "2026-01-01T00:00:00.000Z";
const DRESS: Dress = { agent: "createAgent", rawCalls: true, status: "success" };
const providerArb = fc.constantFrom<Provider>(...PROVIDERS);

describe("the pre-check against the engine", () => {
  it("calls a stored thread clean only when the engine judges it clean, for every provider", async () => {
    let clean = 0;
    await fc.assert(
      fc.asyncProperty(planArb, dressArb, providerArb, async (plan, dress, provider) => {
        const [type, data] = await serde.dumpsTyped(storedHistory(plan, dress));
        const pre = cleanStoredThread(
          { checkpointId: "c", type, data, holds: "messages", writtenAt: TS },
          "messages",
          provider,
        );
        if (!pre) return;
        clean++;
        const tuple = {
          config: {},
          checkpoint: { ts: TS, channel_values: { messages: await serde.loadsTyped(type, data) } },
        };
        const options = { provider, messagesKey: "messages" };
        const judged = judgeThread({ threadId: "t", namespace: "" }, tuple as unknown as CheckpointTuple, options);
        expect(judged.status).toBe("clean");
        expect(pre.messageCount).toBe(judged.messageCount);
      }),
      // Cheap (no store): enough runs that a dropped rule (a call id used twice) is caught every time.
      { numRuns: RUNS * 5 },
    );
    expect(clean).toBeGreaterThan(0);
  });

  it("passes the clean threads agents store (without a system message in the state)", async () => {
    await fc.assert(
      fc.asyncProperty(validPlanArb, dressArb, async (plan, dress) => {
        const [, data] = await serde.dumpsTyped(storedHistory({ ...plan, system: false }, dress));
        expect(cleanMessageCount(JSON.parse(new TextDecoder().decode(data)))).toBeGreaterThan(0);
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });

  it("calls suspicious what it cannot decide: another serializer, bad bytes, an unknown class, an open exchange", async () => {
    const turns = [{ exchanges: [{ calls: 1, order: 0, text: false }], final: true }];
    const plan: HistoryPlan = { system: false, turns, corruptions: [] };
    const [type, data] = await serde.dumpsTyped(storedHistory(plan, DRESS));
    const stored = { checkpointId: "c", type, data, holds: "messages" as const, writtenAt: TS };
    expect(cleanStoredThread(stored, "messages")).toEqual({
      checkpointId: "c",
      writtenAt: stored.writtenAt,
      messageCount: 4,
    });
    expect(cleanStoredThread({ ...stored, type: "bytes" }, "messages")).toBeUndefined();
    expect(cleanStoredThread({ ...stored, data: data.slice(0, -1) }, "messages")).toBeUndefined();
    expect(cleanStoredThread({ ...stored, writtenAt: undefined }, "messages")).toBeUndefined();
    const parsed = JSON.parse(new TextDecoder().decode(data));
    expect(cleanMessageCount(parsed.slice(0, 2))).toBeUndefined(); // ends on a call awaiting its result
    const chunk = { ...parsed[0], id: ["langchain_core", "messages", "HumanMessageChunk"] };
    expect(cleanMessageCount([chunk, ...parsed.slice(1)])).toBeUndefined();
    expect(cleanMessageCount({ messages: parsed })).toBeUndefined();
  });
});

/** `saver` reached only through the methods every saver has: the engine-only path (getTuple / list). */
function genericView(saver: BaseCheckpointSaver): BaseCheckpointSaver {
  return {
    getTuple: (config: never) => saver.getTuple(config),
    list: (config: never, options?: never) => saver.list(config, options),
    put: (...args: never[]) => (saver.put as (...a: never[]) => unknown)(...args),
    putWrites: (...args: never[]) => (saver.putWrites as (...a: never[]) => unknown)(...args),
  } as unknown as BaseCheckpointSaver;
}

async function storeThreads(saver: BaseCheckpointSaver, histories: BaseMessage[][], prefix: string): Promise<void> {
  for (const [i, messages] of histories.entries()) {
    const checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: { messages },
      channel_versions: { messages: 1 },
    };
    const config = { configurable: { thread_id: `${prefix}-${i}`, checkpoint_ns: "" } };
    await saver.put(config, checkpoint, { source: "input", step: 0, parents: {} }, { messages: 1 });
  }
}

async function collect<T>(reports: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const report of reports) out.push(report);
  return out;
}

const byKey = <T extends { threadId: string }>(reports: T[]) =>
  reports.slice().sort((a, b) => a.threadId.localeCompare(b.threadId));
/** What a repair report says, its messages as the engine sees them (the fast path keeps none for clean threads). */
const repairView = (r: ThreadRepairReport) => ({
  ...r,
  before: r.before?.length,
  after: r.after?.length,
  repairs: r.repairs.map((x) => x.problem),
});

const threadsArb = fc.tuple(fc.array(fc.tuple(planArb, dressArb), { minLength: 1, maxLength: 8 }), providerArb);

/** Scan and dry-run repair through the store's pages and through getTuple / list only: the same reports. */
async function sameReports(
  saver: BaseCheckpointSaver,
  plans: [HistoryPlan, Dress][],
  provider: Provider,
  prefix: string,
): Promise<number> {
  await storeThreads(
    saver,
    plans.map(([plan, dress]) => storedHistory(plan, dress)),
    prefix,
  );
  // The scan revives a suspicious thread from the page's bytes: no thread is read again.
  const getTuple = saver.getTuple;
  let reads = 0;
  saver.getTuple = (config) => (reads++, getTuple.call(saver, config));
  let fast: ThreadReport[];
  try {
    fast = byKey(await collect<ThreadReport>(scanThreads(saver, { provider })));
  } finally {
    Reflect.deleteProperty(saver, "getTuple");
  }
  expect(reads).toBe(0);
  const engineOnly = byKey(await collect<ThreadReport>(scanThreads(genericView(saver), { provider })));
  expect(fast).toEqual(engineOnly);
  const repairFast = byKey(await collect(repairThreads(saver, { provider }))).map(repairView);
  const repairEngine = byKey(await collect(repairThreads(genericView(saver), { provider }))).map(repairView);
  expect(repairFast).toEqual(repairEngine);
  let prechecked = 0;
  for await (const item of threadSourceFor(saver, { messagesKey: "messages" })) if (item.clean) prechecked++;
  return prechecked;
}

describe("scans and repairs through the pages report what the engine alone reports", () => {
  it("SqliteSaver", async () => {
    let prechecked = 0;
    await fc.assert(
      fc.asyncProperty(threadsArb, async ([plans, provider]) => {
        const saver = SqliteSaver.fromConnString(":memory:");
        try {
          prechecked += await sameReports(saver, plans, provider, "t");
        } finally {
          saver.db.close();
        }
      }),
      { numRuns: Math.ceil(RUNS / 6) },
    );
    expect(prechecked).toBeGreaterThan(0);
  });

  it("PostgresSaver", async (context) => {
    const { saver, schema } = await postgresSaverOrSkip(context, "precheck");
    let prechecked = 0;
    let run = 0;
    await fc.assert(
      fc.asyncProperty(threadsArb, async ([plans, provider]) => {
        const pool = (saver as unknown as { pool: { query(sql: string): Promise<unknown> } }).pool;
        for (const table of ["checkpoints", "checkpoint_blobs", "checkpoint_writes"])
          await pool.query(`DELETE FROM "${schema}".${table}`);
        prechecked += await sameReports(saver, plans, provider, `run${run++}`);
      }),
      { numRuns: Math.ceil(RUNS / 15) },
    );
    expect(prechecked).toBeGreaterThan(0);
  });

  it("a saver with another serializer (even a subclass of the JSON one) is revived thread by thread", async () => {
    class Tagged extends JsonPlusSerializer {}
    const saver = new SqliteSaver(SqliteSaver.fromConnString(":memory:").db, new Tagged());
    try {
      await storeThreads(
        saver,
        [storedHistory({ system: false, turns: [{ exchanges: [], final: true }], corruptions: [] }, DRESS)],
        "t",
      );
      const items = await collect(threadSourceFor(saver, { messagesKey: "messages" }));
      expect(items.map((item) => item.clean)).toEqual([undefined]);
      const plain = SqliteSaver.fromConnString(":memory:");
      await storeThreads(
        plain,
        [storedHistory({ system: false, turns: [{ exchanges: [], final: true }], corruptions: [] }, DRESS)],
        "t",
      );
      expect((await collect(threadSourceFor(plain, { messagesKey: "messages" })))[0].clean?.messageCount).toBe(2);
      plain.db.close();
    } finally {
      saver.db.close();
    }
  });

  it("real createAgent threads: the clean ones are pre-checked clean, the broken ones are revived and found", async (context) => {
    const { saver } = await postgresSaverOrSkip(context, "precheck_real");
    const model = await startSeedModel("openai");
    context.onTestFinished(() => model.stub.close());
    const seeded = await seedThreads(saver, model, { brokenSend: 1, clean: 2 });
    const items = await collect(threadSourceFor(saver, { messagesKey: "messages" }));
    const prechecked = new Set(items.filter((item) => item.clean).map((item) => item.key.threadId));
    for (const thread of seeded.clean) expect(prechecked.has(thread)).toBe(true);
    for (const thread of seeded.broken) expect(prechecked.has(thread)).toBe(false);
    const reports = await collect(scanThreads(saver));
    expect(
      reports
        .filter((r) => r.status === "broken")
        .map((r) => r.threadId)
        .sort(),
    ).toEqual([...seeded.broken].sort());
  });
});
