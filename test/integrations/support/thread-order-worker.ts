/**
 * One worker process of the two-process no-lost-update test (thread-order-workers.test.ts): its own
 * PostgresSaver on the schema it is given, wrapped once with `withToolCallRepair`, serving createAgent +
 * toolCallRepairMiddleware runs (the real ChatOpenAI against the test's stub) over IPC.
 *
 * - `turn`: a run of a user message or a resume, to its end.
 * - `aborted`: a run whose signal is aborted before it starts, answered once invoke() has rejected (as an
 *   application sees it) and the run's loop has read the thread. The loop goes on; from then on this worker's
 *   reads of the saver answer only on `release`, so the loop reads the thread as it was and creates its checkpoint
 *   after whatever the other worker wrote meanwhile (a slow read). Without waiting for that read, a loaded machine
 *   could let the loop read the thread only after the other worker's turn (the aborted turn then comes after it).
 * - `release`: the held reads answer; answered once the aborted run's last writes have landed.
 */
import { HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { createAgent } from "langchain";
import { withToolCallRepair } from "../../../src/integrations/checkpointer";
import { toolCallRepairMiddleware } from "../../../src/integrations/middleware";
import { postgresSaverOn } from "../../support/services";
import { openAIModel } from "../../support/stubs";
import { HeldTools, tapSaver, type Durability } from "./abort-sweep";

export type OrderRequest =
  | { kind: "turn"; seq: number; thread: string; message?: { text: string; id: string }; durability: Durability }
  | { kind: "aborted"; seq: number; thread: string; message: { text: string; id: string }; durability: Durability }
  | { kind: "release"; seq: number }
  | { kind: "stop"; seq: number };

export interface OrderReply {
  seq: number;
  error?: string;
}

const schema = process.env.LGTR_WORKER_SCHEMA!;
const stubUrl = process.env.LGTR_WORKER_STUB!;

const inner = postgresSaverOn(schema, 4);
let held: (() => void)[] | undefined;
/**
 * The inner saver with reads that can be held back (answered only on release), and its pool hidden from the
 * wrapper: the test is about the write rule, which must hold on any saver, including one the wrapper cannot order
 * through the store. On PostgreSQL the wrapper would make the next turn wait for the aborted run's held read
 * (checkpointer-workers.test.ts tests that).
 */
const gated = new Proxy(inner, {
  get(target, property) {
    if (property === "pool") return undefined;
    const value = Reflect.get(target, property, target);
    if (property !== "getTuple") return typeof value === "function" ? value.bind(target) : value;
    return async (config: RunnableConfig) => {
      const answer = await target.getTuple(config);
      if (held) await new Promise<void>((resolve) => held!.push(resolve));
      return answer;
    };
  },
});
const tap = tapSaver(gated);
const saver: BaseCheckpointSaver = withToolCallRepair(tap.saver, { provider: "openai" });
const tools = new HeldTools();
tools.hold = false;
const agent = createAgent({
  model: openAIModel({ url: stubUrl }),
  tools: tools.tools,
  middleware: [toolCallRepairMiddleware({ provider: "openai" })],
  checkpointer: saver,
});

async function serve(request: OrderRequest): Promise<OrderReply> {
  if (request.kind === "release") {
    for (const resume of held?.splice(0) ?? []) resume();
    held = undefined;
    await tap.quiet();
    return { seq: request.seq };
  }
  if (request.kind === "stop") {
    await inner.end();
    return { seq: request.seq };
  }
  const config = { configurable: { thread_id: request.thread }, durability: request.durability };
  const input = request.message
    ? { messages: [new HumanMessage({ content: request.message.text, id: request.message.id })] }
    : null;
  if (request.kind === "aborted") {
    const controller = new AbortController();
    controller.abort();
    const error = await agent.invoke(input as never, { ...config, signal: controller.signal }).then(
      () => "the run was expected to be aborted",
      () => undefined,
    );
    // The run's loop goes on after the rejection: what it reads from now on answers only on release. Answered once
    // its read of the thread is held (it read the thread as it was before the other worker's turn), however slowly
    // this process runs (at most 5 s).
    held = [];
    for (let waited = 0; !held.length && waited < 5_000; waited += 5) await new Promise((r) => setTimeout(r, 5));
    return { seq: request.seq, error };
  }
  const error = await agent.invoke(input as never, config).then(
    () => undefined,
    (e: Error) => e.message,
  );
  await tap.quiet();
  return { seq: request.seq, error };
}

process.on("message", (request: OrderRequest) => {
  serve(request).then(
    (reply) => process.send!(reply, () => request.kind === "stop" && process.exit(0)),
    (e: Error) => process.send!({ seq: request.seq, error: `worker failed: ${e.stack}` } satisfies OrderReply),
  );
});
process.send!({ ready: true });
