/** Builders that keep scenarios readable: `aiWithCalls("a", "b")`, `toolResult("a")`, `human("hi")`. */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";

let counter = 0;
const nextId = (prefix: string) => `${prefix}-${++counter}`;

export function human(text = "hello"): HumanMessage {
  return new HumanMessage({ content: text, id: nextId("h") });
}

export function system(text = "You are helpful."): SystemMessage {
  return new SystemMessage({ content: text, id: nextId("s") });
}

export function ai(text = "done"): AIMessage {
  return new AIMessage({ content: text, id: nextId("ai"), tool_calls: [] });
}

/** An assistant message calling one tool per id (tool name defaults to `tool_<id>`). */
export function aiWithCalls(...ids: string[]): AIMessage {
  return new AIMessage({
    content: "",
    id: nextId("ai"),
    tool_calls: ids.map((id) => ({
      id,
      name: `tool_${id.replace(/[^a-zA-Z0-9_-]/g, "_")}`,
      args: { q: id },
      type: "tool_call" as const,
    })),
  });
}

export function toolResult(id: string, content = `result of ${id}`): ToolMessage {
  return new ToolMessage({
    content,
    tool_call_id: id,
    name: `tool_${id.replace(/[^a-zA-Z0-9_-]/g, "_")}`,
    id: nextId("t"),
  });
}

/** A short text description of a history, for assertions: `human, ai[a,b], tool(a), tool(b)`. */
export function shape(messages: readonly BaseMessage[]): string {
  return messages
    .map((m) => {
      const type = m.getType();
      if (type === "ai") {
        const ids = ((m as AIMessage).tool_calls ?? []).map((c) => c.id);
        return ids.length ? `ai[${ids.join(",")}]` : "ai";
      }
      if (type === "tool") return `tool(${(m as ToolMessage).tool_call_id})`;
      return type;
    })
    .join(", ");
}
