/**
 * No lost update across processes (src/integrations/thread-order.ts): two Node processes, each with its own
 * PostgresSaver wrapped by `withToolCallRepair`, on one schema. Worker A's run is aborted; its invoke() rejects
 * at once, and the application sends the thread's next turn to worker B, which runs it to the end. A's loop
 * goes on meanwhile (its read of the thread is slow: held until B is done), creates its checkpoint after B's
 * and stores it late. Savers take the highest checkpoint id (a uuid6 that grows with time) as the thread's
 * head, so without the wrapper's rule that late write buries B's turn: B's user message disappears from the
 * latest checkpoint. With it, A's write lands as a branch, and the next turns on either worker run on B's.
 * Every durability mode; a thread with an earlier turn (the late checkpoint has a parent) and a new thread.
 * The savers' pool is hidden from the wrappers (support/thread-order-worker.ts): the rule must hold for a saver the
 * wrapper cannot order through the store.
 */
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findToolCallProblems } from "../../src/engine";
import { postgresSaverOrSkip, POSTGRES_URL } from "../support/services";
import { startOpenAIStub } from "../support/stubs";
import { DURABILITIES, TOOL_NAMES } from "./support/abort-sweep";
import type { OrderReply, OrderRequest } from "./support/thread-order-worker";

const WORKER = fileURLToPath(new URL("./support/thread-order-worker.ts", import.meta.url));

type Request = OrderRequest extends infer R ? (R extends { seq: number } ? Omit<R, "seq"> : never) : never;

interface Worker {
  send(request: Request): Promise<OrderReply>;
  stop(): Promise<void>;
}

async function startWorker(schema: string, stubUrl: string): Promise<Worker> {
  const child: ChildProcess = fork(WORKER, [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, LGTR_WORKER_SCHEMA: schema, LGTR_WORKER_STUB: stubUrl, LGTR_POSTGRES_URL: POSTGRES_URL },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map<number, (reply: OrderReply) => void>();
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.on("message", (message: OrderReply | { ready: true }) => {
      if ("ready" in message) resolve();
      else pending.get(message.seq)?.(message);
    });
  });
  let seq = 0;
  let stopped = false;
  const send = (request: Request) =>
    new Promise<OrderReply>((resolve) => {
      const id = ++seq;
      pending.set(id, resolve);
      child.send({ ...request, seq: id } as OrderRequest);
    });
  return {
    send,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await send({ kind: "stop" });
    },
  };
}

const message = (id: string) => ({ text: `question ${id}`, id });

describe("an aborted run's late write, with two processes sharing one PostgreSQL saver", () => {
  it("never becomes the head over the newer turn the other worker ran; the next turns run on it", async (context) => {
    const postgres = await postgresSaverOrSkip(context, "order_workers");
    const stub = await startOpenAIStub({
      script: (request) => {
        const messages = (request as { messages: { role: string }[] }).messages;
        const calls = TOOL_NAMES.map((n) => ({ name: n, args: { q: n } }));
        return messages.at(-1)?.role === "user" ? { toolCalls: calls } : { text: "answer" };
      },
    });
    const workers: Worker[] = [];
    try {
      const [a, b] = [await startWorker(postgres.schema, stub.url), await startWorker(postgres.schema, stub.url)];
      workers.push(a, b);
      const failures: string[] = [];
      const head = async (thread: string) => {
        const tuple = await postgres.saver.getTuple({ configurable: { thread_id: thread } });
        return (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
      };
      const check = async (thread: string, expected: string[], when: string) => {
        const stored = await head(thread);
        const humans = stored.filter((m) => HumanMessage.isInstance(m)).map((m) => m.id);
        if (JSON.stringify(humans) !== JSON.stringify(expected)) {
          failures.push(
            `${thread} ${when}: user messages ${JSON.stringify(humans)}, expected ${JSON.stringify(expected)}`,
          );
        }
        if (!AIMessage.isInstance(stored.at(-1)))
          failures.push(`${thread} ${when}: the head does not end on the answer`);
        const problems = findToolCallProblems(stored, { provider: "openai" });
        if (problems.length > 0) failures.push(`${thread} ${when}: invalid (${problems.map((p) => p.kind).join(",")})`);
      };
      const reply = (thread: string, what: string, answer: OrderReply) => {
        if (answer.error) failures.push(`${thread} ${what}: ${answer.error.split("\n")[0]}`);
      };

      for (const durability of DURABILITIES) {
        for (const earlier of [true, false]) {
          const thread = `o-${durability}-${earlier ? "earlier" : "new"}`;
          const before = earlier ? [`${thread}-h0`] : [];
          if (earlier)
            reply(
              thread,
              "first turn on B",
              await b.send({ kind: "turn", thread, message: message(before[0]), durability }),
            );
          reply(
            thread,
            "aborted run on A",
            await a.send({ kind: "aborted", thread, message: message(`${thread}-aborted`), durability }),
          );
          reply(
            thread,
            "next turn on B",
            await b.send({ kind: "turn", thread, message: message(`${thread}-h1`), durability }),
          );
          reply(thread, "release A", await a.send({ kind: "release" }));
          await check(thread, [...before, `${thread}-h1`], "after the aborted run's late write");
          reply(
            thread,
            "turn on B",
            await b.send({ kind: "turn", thread, message: message(`${thread}-h2`), durability }),
          );
          reply(
            thread,
            "turn on A",
            await a.send({ kind: "turn", thread, message: message(`${thread}-h3`), durability }),
          );
          await check(thread, [...before, `${thread}-h1`, `${thread}-h2`, `${thread}-h3`], "after two more turns");
          // The aborted run's write is not lost: it is a branch of the thread.
          let branched = false;
          for await (const tuple of postgres.saver.list({ configurable: { thread_id: thread } })) {
            if (JSON.stringify(tuple.checkpoint.channel_values).includes(`${thread}-aborted`)) branched = true;
          }
          if (!branched) failures.push(`${thread}: the aborted run's checkpoint is not stored`);
        }
      }
      expect(failures).toEqual([]);
      expect(stub.rejections).toEqual([]);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      await stub.close();
    }
  }, 300_000);
});
