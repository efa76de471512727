/**
 * One worker process of the several-workers test (checkpointer-workers.test.ts): it opens its own
 * PostgresSaver on the schema it is given, wraps it once with `withToolCallRepair` (the wrapper's per-run
 * memory lives in this process), and serves the turns the test sends it over IPC, each with a createAgent +
 * toolCallRepairMiddleware agent whose model is the real ChatOpenAI against the test's stub.
 *
 * A turn: a new user message or a resume, optionally aborted at a point (tools k/3 finished, or during the
 * second model call). The worker answers once the run's last writes have landed (an aborted invoke() rejects
 * before they do), with the repairs its wrapper reported and the tool calls that ran to completion.
 */
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { createAgent } from "langchain";
import { withToolCallRepair } from "../../../src/integrations/checkpointer";
import { toolCallRepairMiddleware } from "../../../src/integrations/middleware";
import type { ToolCallRepair } from "../../../src/types";
import { postgresSaverOn } from "../../support/services";
import { openAIModel } from "../../support/stubs";
import { buildSurface, HeldTools, tapSaver, type Surface } from "./abort-sweep";

export type WorkerAbort =
  | "before first step"
  | "first model call"
  | "tools 0/3"
  | "tools 1/3"
  | "tools 2/3"
  | "second model call";

export interface TurnRequest {
  kind: "turn";
  seq: number;
  thread: string;
  /** A new user message (text and id), or a resume when absent. */
  message?: { text: string; id: string };
  abort?: WorkerAbort;
  /** Answer as soon as invoke() settles, as an application does (an aborted run's writes may still be landing). */
  immediate?: boolean;
  /** Default createAgent + toolCallRepairMiddleware. */
  surface?: Surface;
}

export interface TurnReply {
  seq: number;
  worker: string;
  /** Calls whose tool ran to completion in this turn. */
  completed: string[];
  error?: string;
}

/** Sent once, in answer to "stop": every repair this worker's wrapper reported. */
export interface StopReply {
  stopped: string;
  repairs: ToolCallRepair[];
}

const worker = process.env.LGTR_WORKER_NAME ?? `pid ${process.pid}`;
const schema = process.env.LGTR_WORKER_SCHEMA!;
const stubUrl = process.env.LGTR_WORKER_STUB!;

const inner = postgresSaverOn(schema, 4);
const tap = tapSaver(inner);
// Call ids are unique across threads, so the reports need no routing to their turn.
const repairs: ToolCallRepair[] = [];
const repairing: BaseCheckpointSaver = withToolCallRepair(tap.saver, {
  provider: "openai",
  onRepair: (repair) => void repairs.push(repair),
});
/** Per thread, who waits for its next run's first read to reach the wrapper. */
const firstReads = new Map<string, () => void>();
/**
 * The wrapper, with a run's first read noted: a run aborted before LangGraph first reads its thread is one no
 * store knows of yet (its invoke() rejects at once, its loop reads the thread later), so the test aborts a run
 * from its first read on (docs/checkpointer.md, "Several workers").
 */
const wrapped = new Proxy(repairing, {
  get(target, property) {
    const value = Reflect.get(target, property, target);
    if (property !== "getTuple") return typeof value === "function" ? value.bind(target) : value;
    return (config: RunnableConfig) => {
      const thread = String(config.configurable?.thread_id);
      const promise = target.getTuple(config);
      firstReads.get(thread)?.();
      firstReads.delete(thread);
      return promise;
    };
  },
});

async function storedResult(thread: string, callId: string): Promise<boolean> {
  for await (const tuple of inner.list({ configurable: { thread_id: thread } })) {
    for (const [, channel, value] of tuple.pendingWrites ?? []) {
      if (channel !== "messages") continue;
      for (const m of Array.isArray(value) ? value : [value])
        if (ToolMessage.isInstance(m) && m.tool_call_id === callId) return true;
    }
  }
  return false;
}

const wait = () => new Promise((resolve) => setImmediate(resolve));

async function serve(request: TurnRequest): Promise<TurnReply> {
  const tools = new HeldTools();
  const model = openAIModel({ url: stubUrl });
  const agent =
    request.surface && request.surface !== "createAgent+middleware"
      ? buildSurface(request.surface, model, tools, wrapped, { provider: "openai" })
      : createAgent({
          model,
          tools: tools.tools,
          middleware: [toolCallRepairMiddleware({ provider: "openai" })],
          checkpointer: wrapped,
        });
  const controller = new AbortController();
  const held = request.abort?.startsWith("tools ") ? Number(request.abort[6]) : -1;
  // Aborted at the start or during the first model call, no tool may finish (a finished tool whose write is not
  // yet stored when the run stops is lost by LangGraph's design: nothing to assert on).
  tools.hold = held >= 0 || request.abort === "before first step" || request.abort === "first model call";
  // Aborted before the first step: as the run's first read of its thread reaches the wrapper (so that read is
  // under way when the signal fires); during the first model call: a few turns after that read.
  const firstRead = new Promise<void>((resolve) => firstReads.set(request.thread, resolve));
  if (request.abort === "before first step") void firstRead.then(() => controller.abort());
  let error: string | undefined;
  let settled = false;
  const input = request.message
    ? { messages: [new HumanMessage({ content: request.message.text, id: request.message.id })] }
    : null;
  const run = agent
    .invoke(input as never, { configurable: { thread_id: request.thread }, signal: controller.signal })
    .then(
      () => void (settled = true),
      (e: Error) => {
        settled = true;
        error = e.message;
      },
    );
  if (request.abort === "first model call") {
    // A few turns in: before, during or right after the first model call.
    await firstRead;
    for (let turn = Math.floor(Math.random() * 40); turn > 0 && !settled; turn--) await wait();
    controller.abort();
  } else if (request.abort === "before first step") await firstRead;
  else if (request.abort) {
    // Tools k/3: release k of the three held tools, each until its result is stored, then abort. The second
    // model call: all three run, then the abort lands while the model answers or just before.
    const releasing = held >= 0 ? held : 3;
    await Promise.race([tools.when(() => tools.started.length === 3), run]);
    for (const id of tools.started.slice(0, releasing)) {
      tools.release(id);
      for (let turn = 0; turn < 20_000 && !settled && !(await storedResult(request.thread, id)); turn++) await wait();
    }
    controller.abort();
  }
  await run;
  // An aborted invoke() rejects before the run's last writes land: answer only once they have (unless immediate).
  if (!request.immediate) await tap.quiet();
  return { seq: request.seq, worker, completed: [...tools.completed.keys()], error };
}

process.on("message", (message: TurnRequest | { kind: "stop" }) => {
  if (message.kind === "stop") {
    void inner.end().then(() => process.send!({ stopped: worker, repairs } satisfies StopReply, () => process.exit(0)));
    return;
  }
  serve(message).then(
    (reply) => process.send!(reply),
    (e: Error) =>
      process.send!({
        seq: message.seq,
        worker,
        completed: [],
        error: `worker failed: ${e.stack}`,
      } satisfies TurnReply),
  );
});
// Ready once the wrapper's own connection is open (a run's first read waits for it): an abort before then is not
// held in the store (docs/checkpointer.md, "Several workers").
void repairing
  .getTuple({ configurable: { thread_id: "warm-up" }, signal: new AbortController().signal })
  .then(() => process.send!({ ready: worker }));
