/** Deterministic histories for the benchmarks: a ReAct loop with parallel calls and large tool results. */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";

const payloads = new Map<number, string>();
const payload = (bytes: number) => {
  if (!payloads.has(bytes)) payloads.set(bytes, "x".repeat(bytes));
  return payloads.get(bytes)!;
};

/** About `size` messages: user, assistant with 2 calls, 2 results, final answer; repeated. */
export function cleanHistory(
  size: number,
  resultBytes: (i: number) => number = (i) => [100, 1_000, 10_000, 100_000][i % 4],
): BaseMessage[] {
  const out: BaseMessage[] = [new SystemMessage({ content: "You are an agent.", id: "sys" })];
  for (let t = 0; out.length < size; t++) {
    out.push(new HumanMessage({ content: `question ${t}`, id: `h${t}` }));
    const ids = [`call_${t}_a`, `call_${t}_b`];
    out.push(
      new AIMessage({
        id: `ai${t}`,
        content: "",
        tool_calls: ids.map((id) => ({ id, name: "search", args: { q: id }, type: "tool_call" as const })),
        additional_kwargs: {
          tool_calls: ids.map((id) => ({ id, type: "function", function: { name: "search", arguments: "{}" } })),
        },
      }),
    );
    ids.forEach((id, k) =>
      out.push(new ToolMessage({ content: payload(resultBytes(t * 2 + k)), tool_call_id: id, id: `t_${id}` })),
    );
    out.push(new AIMessage({ id: `final${t}`, content: `answer ${t}`, tool_calls: [] }));
  }
  return out.slice(0, size);
}

/** The same history with about 5% of its messages involved in a problem (dropped, moved, stray, duplicated). */
export function brokenHistory(size: number): BaseMessage[] {
  const h = cleanHistory(size);
  const problems = Math.max(1, Math.floor(size * 0.05));
  for (let p = 0; p < problems; p++) {
    const at = 1 + Math.floor(((p + 0.5) / problems) * (h.length - 2));
    switch (p % 4) {
      case 0: {
        // an aborted tool: drop a result
        const i = h.findIndex((m, k) => k >= at && ToolMessage.isInstance(m));
        if (i > 0) h.splice(i, 1);
        break;
      }
      case 1: // a steering message between a call and its results
        h.splice(at, 0, new HumanMessage({ content: `steer ${p}`, id: `steer${p}` }));
        break;
      case 2: // a stray result after a trim
        h.splice(at, 0, new ToolMessage({ content: "stray", tool_call_id: `gone_${p}`, id: `stray${p}` }));
        break;
      case 3: {
        // a duplicated result
        const i = h.findIndex((m, k) => k >= at && ToolMessage.isInstance(m));
        if (i > 0) h.splice(i, 0, h[i]);
        break;
      }
    }
  }
  return h;
}
