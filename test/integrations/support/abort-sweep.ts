/**
 * The abort sweep: one run of an agent with three parallel tool calls, aborted at a chosen point, then a new
 * input or a resume, on every surface (createAgent + middleware, createReactAgent + hook, createReactAgent v2 +
 * the kit, StateGraph + node), with and without the checkpointer wrapper, in every durability mode, on
 * MemorySaver, SqliteSaver and PostgresSaver. The model is the real ChatOpenAI (or ChatBedrockConverse) against
 * the strict local stub. Each case returns the list of what went wrong (empty when the thread, and what the model
 * was sent, are as they must be), so a test can pin exactly which cases fail.
 */
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { z } from "zod";
import { findToolCallProblems } from "../../../src/engine";
import { withToolCallRepair } from "../../../src/integrations/checkpointer";
import { toolCallRepairHook } from "../../../src/integrations/hook";
import { toolCallRepairMiddleware } from "../../../src/integrations/middleware";
import { toolCallRepairNode } from "../../../src/integrations/node";
import { toolCallRepairKit } from "../../../src/integrations/node";
import { isSyntheticResult } from "../../../src/messages/inspect";
import type { RepairOptions, ToolCallRepair } from "../../../src/types";
import { createPostgresSaver } from "../../support/services";
import { bedrockModel, openAIModel, startBedrockStub, startOpenAIStub, type RunningStub } from "../../support/stubs";

export type Surface =
  | "createAgent+middleware"
  | "createReactAgent+hook"
  | "createReactAgent v2+kit"
  | "StateGraph+node";
export const SURFACES: readonly Surface[] = [
  "createAgent+middleware",
  "createReactAgent+hook",
  "createReactAgent v2+kit",
  "StateGraph+node",
];
/** Surfaces whose tools run as one task per call (`Send`), so a finished sibling's result is a pending write. */
export const PER_CALL_TASKS: ReadonlySet<Surface> = new Set([
  "createAgent+middleware",
  "createReactAgent v2+kit",
  "StateGraph+node",
]);
export type SweepProvider = "openai" | "bedrock";
export type Durability = "sync" | "async" | "exit";
export const DURABILITIES: readonly Durability[] = ["sync", "async", "exit"];
export type Continuation = "new input" | "resume";
export const CONTINUATIONS: readonly Continuation[] = ["new input", "resume"];
export type SaverName = "MemorySaver" | "SqliteSaver" | "PostgresSaver";

/**
 * Where the first run is aborted: before its first step (the signal is already aborted), during the first
 * model call, once 0, 1 or 2 of the three tools have finished (the others held), during the second model call.
 * "none" lets the run finish.
 */
export type AbortPoint =
  | "before first step"
  | "first model call"
  | "tools 0/3"
  | "tools 1/3"
  | "tools 2/3"
  | "second model call"
  | "none"
  | `write ${number} issued`
  | `write ${number} stored`;
export const ABORT_POINTS: readonly AbortPoint[] = [
  "before first step",
  "first model call",
  "tools 0/3",
  "tools 1/3",
  "tools 2/3",
  "second model call",
  "none",
];

/** The write points of a run that makes `writes` saver writes (put / putWrites): abort as each is issued, or once it is stored. */
export function writePoints(writes: number): AbortPoint[] {
  const points: AbortPoint[] = [];
  for (let k = 1; k <= writes; k++) points.push(`write ${k} issued`, `write ${k} stored`);
  return points;
}

/** What a tapped saver reports: each write as it is issued and once stored, and how many operations are under way. */
export interface SaverTap {
  saver: BaseCheckpointSaver;
  /** Operations (reads and writes) issued and not yet settled. */
  readonly inFlight: number;
  /** Resolves once no operation has been under way for a few turns of the event loop (the run's writes have landed). */
  quiet(): Promise<void>;
}

/**
 * The saver seen through a tap: `onWrite(n, phase)` is called as the n-th put / putWrites is issued and once
 * it has been stored; reads and writes under way are counted. Everything else is the saver's own.
 */
export function tapSaver(
  saver: BaseCheckpointSaver,
  onWrite: (n: number, phase: "issued" | "stored") => void = () => {},
): SaverTap {
  let writes = 0;
  let inFlight = 0;
  const track = <T>(promise: Promise<T>): Promise<T> => {
    inFlight++;
    return promise.finally(() => inFlight--);
  };
  const write =
    (method: "put" | "putWrites") =>
    async (...args: unknown[]) => {
      const k = ++writes;
      onWrite(k, "issued");
      const out = await track((saver[method] as (...a: unknown[]) => Promise<unknown>).apply(saver, args));
      onWrite(k, "stored");
      return out;
    };
  const overrides: Record<PropertyKey, unknown> = {
    put: write("put"),
    putWrites: write("putWrites"),
    getTuple: (config: RunnableConfig) => track(saver.getTuple(config)),
  };
  const tapped = new Proxy(saver, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property];
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    saver: tapped,
    get inFlight() {
      return inFlight;
    },
    async quiet() {
      // LangGraph issues a run's last writes a few promise hops after the previous one lands: a quiet stretch
      // with nothing under way (several event-loop turns, and a few milliseconds for a loaded machine) means
      // the run has stopped writing. This waits; nothing is asserted about time.
      let calmSince = Date.now();
      for (let calm = 0, turn = 0; (calm < 5 || Date.now() - calmSince < 20) && turn < 100_000; turn++) {
        await new Promise((resolve) => setImmediate(resolve));
        if (inFlight === 0) calm++;
        else [calm, calmSince] = [0, Date.now()];
      }
    },
  };
}

export const TOOL_NAMES = ["alpha", "beta", "gamma"] as const;

/** An OpenAI stub's script: the three tools called after a user message, an answer after their results. */
export const toolsThenAnswer = (request: unknown) =>
  (request as { messages: { role: string }[] }).messages.at(-1)?.role === "user"
    ? { toolCalls: TOOL_NAMES.map((name) => ({ name, args: { q: name } })) }
    : { text: "answer" };

type Dict = Record<string, unknown>;
const asDict = (v: unknown): Dict => (typeof v === "object" && v !== null ? (v as Dict) : {});

/** The stub's turn: three parallel calls after a user message, a text answer after tool results. */
function endsOnUser(provider: SweepProvider, request: unknown): boolean {
  const messages = asDict(request).messages;
  if (!Array.isArray(messages) || messages.length === 0) return false;
  const last = asDict(messages[messages.length - 1]);
  const blocks = Array.isArray(last.content) ? last.content : [];
  return last.role === "user" && (provider === "openai" || !blocks.some((block) => "toolResult" in asDict(block)));
}

/** The text of each tool result a request sends, by call id, as the provider receives it. */
export function sentToolResults(provider: SweepProvider, request: unknown): Map<string, string> {
  const texts = new Map<string, string>();
  const textOf = (content: unknown) =>
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content.map((part) => String(asDict(part).text ?? "")).join("")
        : "";
  for (const message of (asDict(request).messages as unknown[]) ?? []) {
    const m = asDict(message);
    if (provider === "openai") {
      if (m.role === "tool") texts.set(String(m.tool_call_id), textOf(m.content));
      continue;
    }
    for (const block of Array.isArray(m.content) ? m.content : []) {
      const result = asDict(asDict(block).toolResult);
      if (typeof result.toolUseId === "string") texts.set(result.toolUseId, textOf(result.content));
    }
  }
  return texts;
}

/** Tools whose runs are recorded per call id; each is held until the driver releases it (or the run aborts). */
export class HeldTools {
  readonly started: string[] = [];
  readonly completed = new Map<string, number>();
  private releases = new Map<string, () => void>();
  private released = new Set<string>();
  private waiters: (() => void)[] = [];
  hold = true;

  private notify() {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves when `condition` holds (checked on every tool event). */
  when(condition: () => boolean): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => (condition() ? resolve() : this.waiters.push(check));
      this.waiters.push(check);
    });
  }

  release(id: string) {
    this.released.add(id);
    this.releases.get(id)?.();
  }

  readonly tools = TOOL_NAMES.map((name) =>
    tool(
      async ({ q }, config) => {
        const id = (config as { toolCall?: { id?: string } }).toolCall?.id ?? "?";
        this.started.push(id);
        this.notify();
        if (this.hold && !this.released.has(id)) {
          await new Promise<void>((resolve, reject) => {
            const signal = (config as RunnableConfig).signal;
            if (signal?.aborted) return reject(new Error("aborted"));
            signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
            this.releases.set(id, resolve);
          });
        }
        this.completed.set(id, (this.completed.get(id) ?? 0) + 1);
        this.notify();
        return `${name} result for ${q}`;
      },
      { name, description: `Looks ${name} up.`, schema: z.object({ q: z.string() }) },
    ),
  );
}

export interface SweepCase {
  saver: SaverName;
  surface: Surface;
  wrap: boolean;
  durability: Durability;
  point: AbortPoint;
  continuation: Continuation;
  /** Repair options for the surface and the wrapper. Default: none (what a user writes first). */
  repairOptions?: RepairOptions;
  /** The model's client and stub. Default `"openai"` (ChatOpenAI); `"bedrock"` is ChatBedrockConverse. */
  provider?: SweepProvider;
  /**
   * Start the second run as soon as the first one's promise rejects. An aborted run rejects at once (core's
   * `raceWithSignal`) while LangGraph is still writing its last checkpoint: with a saver that does real I/O
   * those writes land during the second run. Default false: wait for them first.
   */
  immediate?: boolean;
}

export const caseName = (c: SweepCase) =>
  `${c.provider ?? "openai"} | ${c.saver} | ${c.surface}${c.wrap ? " + wrapper" : ""} | ` +
  `${c.durability} | abort ${c.point} | ${c.continuation}`;

export interface SaverHandle {
  saver: BaseCheckpointSaver;
  dispose(): Promise<void> | void;
}

export async function openSaver(name: SaverName, label: string): Promise<SaverHandle> {
  if (name === "MemorySaver") return { saver: new MemorySaver(), dispose: () => {} };
  if (name === "SqliteSaver") {
    const saver = SqliteSaver.fromConnString(":memory:");
    return { saver, dispose: () => saver.db.close() };
  }
  const handle = await createPostgresSaver(label);
  return { saver: handle.saver, dispose: handle.dispose };
}

interface Graph {
  stream(
    input: unknown,
    config: RunnableConfig & { streamMode?: string; durability?: Durability },
  ): Promise<AsyncIterable<unknown>>;
  invoke(input: unknown, config: RunnableConfig & { durability?: Durability }): Promise<unknown>;
}

/** The three surfaces, each compiled with `checkpointer`; repairs of the surface go to `onRepair`. */
export function buildSurface(
  surface: Surface,
  model: ReturnType<typeof openAIModel> | ReturnType<typeof bedrockModel>,
  tools: HeldTools,
  checkpointer: BaseCheckpointSaver,
  options: RepairOptions,
): Graph {
  if (surface === "createAgent+middleware") {
    return createAgent({
      model,
      tools: tools.tools,
      middleware: [toolCallRepairMiddleware(options)],
      checkpointer,
    }) as unknown as Graph;
  }
  if (surface === "createReactAgent+hook") {
    return createReactAgent({
      llm: model,
      tools: tools.tools,
      preModelHook: toolCallRepairHook({ ...options, persist: true }),
      checkpointer,
    }) as unknown as Graph;
  }
  if (surface === "createReactAgent v2+kit") {
    // The kit's checkpointer is withToolCallRepair, which the sweep applies itself (with and without it).
    const kit = toolCallRepairKit(options);
    return createReactAgent({
      llm: kit.model(model),
      tools: tools.tools,
      version: "v2",
      preModelHook: kit.preModelHook,
      checkpointer,
    }) as unknown as Graph;
  }
  // The node stores structural repairs only; the provider's shaping of each request is the model's (the kit's setup).
  const bound = toolCallRepairKit(options).model(model).bindTools(tools.tools);
  const route = (state: typeof MessagesAnnotation.State) => {
    const calls = (state.messages.at(-1) as AIMessage).tool_calls ?? [];
    return calls.length === 0 ? END : calls.map((call) => new Send("tools", { ...state, lg_tool_call: call }));
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("repair", toolCallRepairNode(options))
    .addNode("model", async (state: typeof MessagesAnnotation.State, config: RunnableConfig) => ({
      messages: [await bound.invoke(state.messages, config)],
    }))
    .addNode("tools", new ToolNode(tools.tools))
    .addEdge(START, "repair")
    .addEdge("repair", "model")
    .addConditionalEdges("model", route, ["tools", END])
    .addEdge("tools", "repair")
    .compile({ checkpointer }) as unknown as Graph;
}

export interface SweepOutcome {
  name: string;
  /** What went wrong; empty when the stored thread is as it must be. */
  failures: string[];
  stored: BaseMessage[];
  repairs: ToolCallRepair[];
  firstError?: string;
  secondError?: string;
  /** Saver writes the first run made (put and putWrites). */
  firstRunWrites: number;
}

const FIRST = () => new HumanMessage({ content: "first question", id: "h-first" });
const SECOND = () => new HumanMessage({ content: "second question", id: "h-second" });

/** Tool results already stored in the saver for `thread` (messages or pending writes): finished work. */
async function storedResults(saver: BaseCheckpointSaver, thread: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const note = (value: unknown) => {
    for (const m of Array.isArray(value) ? value : [value]) {
      if (ToolMessage.isInstance(m) && !isSyntheticResult(m) && m.status !== "error")
        found.set(m.tool_call_id, String(m.content));
    }
  };
  for await (const tuple of saver.list({ configurable: { thread_id: thread, checkpoint_ns: "" } })) {
    note(tuple.checkpoint.channel_values.messages);
    for (const [, channel, value] of tuple.pendingWrites ?? []) if (channel === "messages") note(value);
  }
  return found;
}

/**
 * Runs one case on `saver` (thread `thread`), returns what went wrong. The first run is driven through
 * `stream` so the driver sees each finished tool task before it aborts.
 */
export async function runSweepCase(c: SweepCase, saver: BaseCheckpointSaver, thread: string): Promise<SweepOutcome> {
  const controller = new AbortController();
  let modelCalls = 0;
  const provider = c.provider ?? "openai";
  const script = (request: unknown) => {
    modelCalls++;
    if ((c.point === "first model call" && modelCalls === 1) || (c.point === "second model call" && modelCalls === 2))
      controller.abort();
    return endsOnUser(provider, request)
      ? { toolCalls: TOOL_NAMES.map((name) => ({ name, args: { q: name } })) }
      : { text: `answer ${modelCalls}` };
  };
  const stub: RunningStub =
    provider === "openai" ? await startOpenAIStub({ script }) : await startBedrockStub({ script });
  try {
    const tools = new HeldTools();
    const repairs: ToolCallRepair[] = [];
    const options: RepairOptions = { ...c.repairOptions, onRepair: (r) => repairs.push(r) };
    // Writes of the first run only: the tap counts them and aborts at a write point.
    let firstRunWrites = 0;
    let counting = true;
    const writePoint = /^write (\d+) (issued|stored)$/.exec(c.point);
    const tap = tapSaver(saver, (n, phase) => {
      if (!counting) return;
      if (phase === "issued") firstRunWrites = n;
      if (writePoint && Number(writePoint[1]) === n && writePoint[2] === phase) controller.abort();
    });
    const checkpointer = c.wrap ? withToolCallRepair(tap.saver, options) : tap.saver;
    const graph = buildSurface(
      c.surface,
      provider === "openai" ? openAIModel(stub) : bedrockModel(stub),
      tools,
      checkpointer,
      options,
    );
    const config = { configurable: { thread_id: thread }, durability: c.durability };

    // First run.
    if (c.point === "before first step") controller.abort();
    if (!c.point.startsWith("tools ")) tools.hold = false;
    const finishedTools: string[] = [];
    const firstRun = rootRunEnd();
    let firstError: string | undefined;
    const first = (async () => {
      const stream = await graph.stream(
        { messages: [FIRST()] },
        { ...config, streamMode: "updates", signal: controller.signal, callbacks: [firstRun.handler] },
      );
      for await (const chunk of stream) {
        for (const update of Object.values(asDict(chunk))) {
          for (const m of (asDict(update).messages as unknown[]) ?? [])
            if (ToolMessage.isInstance(m)) finishedTools.push(m.tool_call_id);
        }
      }
    })().catch((error: Error) => {
      firstError = error.message;
    });
    const held = c.point.startsWith("tools ") ? Number(c.point[6]) : -1;
    if (held >= 0) {
      await Promise.race([tools.when(() => tools.started.length === 3), first]);
      for (const id of tools.started.slice(0, held)) {
        tools.release(id);
        // The finished task is committed (its update streamed), and stored unless the mode stores on exit only.
        await Promise.race([
          until(() => finishedTools.includes(id) || (c.surface === "createReactAgent+hook" && tools.completed.has(id))),
          first,
        ]);
        if (c.durability !== "exit" && PER_CALL_TASKS.has(c.surface)) {
          await Promise.race([untilAsync(async () => (await storedResults(saver, thread)).has(id)), first]);
        }
      }
      controller.abort();
    }
    await first;
    // The aborted run's promise rejected, but its loop may still be writing: let it end and its writes land first.
    if (!c.immediate) {
      await tap.quiet();
      await firstRun.ended();
      await tap.quiet();
    }
    counting = false;
    tools.hold = false;
    const rejectionsBefore = stub.rejections.length;
    const requestsBefore = stub.requests.length;

    // Second run: a new input or a resume.
    let secondError: string | undefined;
    try {
      await graph.invoke(c.continuation === "new input" ? { messages: [SECOND()] } : null, config);
    } catch (error) {
      secondError = (error as Error).message;
    }
    await tap.quiet();

    // Every real result the saver holds for the thread, in any checkpoint or pending write: finished work.
    const finishedBefore = await storedResults(saver, thread);
    const stored = ((await saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: "" } }))?.checkpoint
      .channel_values.messages ?? []) as BaseMessage[];
    const failures = judge(c, stored, {
      finishedBefore,
      tools,
      secondError,
      rejections: stub.rejections.slice(rejectionsBefore).map((r) => r.rule),
      sent: stub.requests.slice(requestsBefore).map((request) => sentToolResults(provider, request)),
    });
    return { name: caseName(c), failures, stored, repairs, firstError, secondError, firstRunWrites };
  } finally {
    await stub.close();
  }
}

/** What must hold after the second run. Each failure is a short label with the ids involved. */
function judge(
  c: SweepCase,
  stored: BaseMessage[],
  seen: {
    finishedBefore: Map<string, string>;
    tools: HeldTools;
    secondError?: string;
    rejections: string[];
    sent: Map<string, string>[];
  },
): string[] {
  const failures: string[] = [];
  if (seen.secondError) failures.push(`second run threw: ${seen.secondError.split("\n")[0]}`);
  if (seen.rejections.length > 0) failures.push(`provider rejected: ${seen.rejections.join(",")}`);
  const problems = findToolCallProblems(stored, { provider: "openai" });
  if (problems.length > 0)
    failures.push(`stored thread invalid: ${[...new Set(problems.map((p) => p.kind))].join(",")}`);

  const humans = stored.filter((m) => HumanMessage.isInstance(m));
  const expected = c.continuation === "new input" ? [FIRST(), SECOND()] : [FIRST()];
  for (const sent of expected) {
    const copies = humans.filter((m) => m.id === sent.id);
    if (copies.length !== 1) failures.push(`user message ${sent.id} stored ${copies.length} times`);
    else if (copies[0].content !== sent.content) failures.push(`user message ${sent.id} altered`);
  }
  if (humans.length !== expected.length)
    failures.push(`${humans.length} user messages stored, ${expected.length} sent`);
  if (!seen.secondError && !AIMessage.isInstance(stored.at(-1))) failures.push("thread does not end on the answer");

  const results = stored.filter((m): m is ToolMessage => ToolMessage.isInstance(m));
  for (const [id, content] of seen.finishedBefore) {
    const kept = results.filter((m) => m.tool_call_id === id);
    if (!kept.some((m) => !isSyntheticResult(m) && m.content === content)) {
      failures.push(
        kept.some(isSyntheticResult) ? "finished result replaced by a placeholder" : "finished result lost",
      );
    }
  }
  for (const result of results) {
    if (isSyntheticResult(result)) {
      if (c.continuation === "resume") failures.push("placeholder stored on resume (the call never ran)");
      continue;
    }
    if (!seen.tools.completed.has(result.tool_call_id))
      failures.push(
        `real-looking result for a call whose tool never finished (${String(result.content).slice(0, 40)})`,
      );
  }

  // What the model was sent in the second run: its first request (the turn the new input arrives in) already
  // carries every finished result as it really was, and no placeholder claims that a tool which started did not run.
  const [firstSent] = seen.sent;
  if (firstSent) {
    for (const [id, content] of seen.finishedBefore) {
      const text = firstSent.get(id);
      if (text !== undefined && text !== content)
        failures.push("model's request in that turn lacks a finished result (placeholder sent)");
    }
  }
  for (const sent of seen.sent) {
    for (const [id, text] of sent) {
      if (seen.tools.started.includes(id) && /did not run/.test(text))
        failures.push("placeholder sent says a tool that started did not run");
    }
  }
  return [...new Set(failures)];
}

/**
 * When the graph's own run ends. An aborted `stream()` rejects at once (core's `raceWithSignal`), but LangGraph's
 * loop goes on until its tasks settle and its checkpoint writes land, and only then ends the root run (error or
 * end callback). No quiet stretch of time can stand in for that on a loaded machine: a write can be issued after
 * any pause. `ended()` resolves at once when the root run never started, and is bounded.
 */
export function rootRunEnd() {
  let root: string | undefined;
  let done = false;
  let wake = () => {};
  const finished = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const end = (runId: string) => {
    if (runId !== root) return;
    done = true;
    wake();
  };
  return {
    handler: {
      handleChainStart(_chain: unknown, _inputs: unknown, runId: string, parentRunId?: string) {
        if (parentRunId === undefined) root ??= runId;
      },
      handleChainEnd: (_outputs: unknown, runId: string) => end(runId),
      handleChainError: (_error: unknown, runId: string) => end(runId),
    },
    ended: async () => {
      if (root === undefined || done) return;
      await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, 30_000))]);
    },
  };
}

// Both are raced against the run itself and bounded by time, not by event-loop turns (a loaded machine's
// tools and saver writes take longer than any fixed number of turns).
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
}

async function untilAsync(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** A saver whose writes can be held back: while held, put and putWrites wait (issued, not stored) until released. */
export function gateWrites(saver: BaseCheckpointSaver) {
  let held = false;
  let waiting: (() => void)[] = [];
  let issued = 0;
  const gate = async () => {
    issued++;
    if (held) await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const write =
    (method: "put" | "putWrites") =>
    async (...args: unknown[]) => {
      await gate();
      return (saver[method] as (...a: unknown[]) => Promise<unknown>).apply(saver, args);
    };
  const overrides: Record<PropertyKey, unknown> = { put: write("put"), putWrites: write("putWrites") };
  return {
    saver: new Proxy(saver, {
      get(target, property) {
        if (Object.hasOwn(overrides, property)) return overrides[property];
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }),
    hold() {
      held = true;
    },
    /** Writes issued so far (held or not). */
    get issued() {
      return issued;
    },
    release() {
      held = false;
      for (const resume of waiting) resume();
      waiting = [];
    },
  };
}
