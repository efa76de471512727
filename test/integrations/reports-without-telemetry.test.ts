/**
 * `@opentelemetry/api` is an optional peer: without it, reports are what they were (onRepair, custom events), and a
 * report never fails for it. Its absence is simulated: importing it throws as a missing package does.
 */
import { RunnableLambda } from "@langchain/core/runnables";
import { describe, expect, it, vi } from "vitest";
import { reportRepairs, TOOL_CALL_REPAIR_EVENT } from "../../src/integrations/events";
import type { ToolCallRepair } from "../../src/types";

vi.mock("@opentelemetry/api", () => {
  throw new Error("Cannot find package '@opentelemetry/api'");
});

const repair: ToolCallRepair = {
  problem: "orphan_call",
  action: "synthesized_result",
  index: 1,
  toolCallId: "a",
  detail: "synthetic error result added for a",
};

describe("without @opentelemetry/api", () => {
  it("every repair still reaches onRepair and the custom event, with its thread", async () => {
    await expect(import("@opentelemetry/api")).rejects.toThrow();
    const heard: unknown[] = [];
    const events: unknown[] = [];
    const node = RunnableLambda.from(async (_: number, config) => {
      await reportRepairs(
        [repair],
        { onRepair: (r, context) => heard.push([r, context]) },
        { surface: "node", config },
      );
      return 1;
    });
    for await (const event of node.streamEvents(1, { version: "v2", configurable: { thread_id: "t" } }))
      if (event.event === "on_custom_event" && event.name === TOOL_CALL_REPAIR_EVENT) events.push(event.data);
    expect(heard).toEqual([[repair, { surface: "node", threadId: "t" }]]);
    expect(events).toEqual([{ ...repair, surface: "node", threadId: "t" }]);
  });
});
