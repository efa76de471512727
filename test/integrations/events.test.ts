import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { awaitAllCallbacks } from "@langchain/core/callbacks/promises";
import { RunnableLambda } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { reportRepairs, TOOL_CALL_REPAIR_EVENT } from "../../src/integrations/events";
import type { ToolCallRepair } from "../../src/types";

const repair = (toolCallId: string): ToolCallRepair => ({
  problem: "orphan_call",
  action: "synthesized_result",
  index: 1,
  toolCallId,
  detail: `synthetic error result added for ${toolCallId}`,
});

class CustomEventRecorder extends BaseCallbackHandler {
  name = "custom_event_recorder";
  events: { name: string; data: unknown; runId: string }[] = [];
  chains: string[] = [];
  override async handleCustomEvent(name: string, data: unknown, runId: string) {
    this.events.push({ name, data, runId });
  }
  override async handleChainStart(
    _chain: unknown,
    _inputs: unknown,
    _runId: string,
    _parent?: string,
    _tags?: string[],
    _meta?: unknown,
    _type?: string,
    runName?: string,
  ) {
    this.chains.push(runName ?? "");
  }
}

describe("reportRepairs", () => {
  it("calls onRepair once per repair, in order", async () => {
    const seen: string[] = [];
    await reportRepairs([repair("a"), repair("b")], { onRepair: (r) => seen.push(r.toolCallId!) });
    expect(seen).toEqual(["a", "b"]);
  });

  it("does not throw outside any runnable context", async () => {
    await expect(reportRepairs([repair("a")])).resolves.toBeUndefined();
  });

  it("dispatches one custom event per repair on the run it is called from", async () => {
    const node = RunnableLambda.from(async (_: number, config) => {
      await reportRepairs([repair("a"), repair("b")], {}, config);
      return 1;
    });
    const events: { name: string; data: ToolCallRepair }[] = [];
    for await (const event of node.streamEvents(1, { version: "v2" }))
      if (event.event === "on_custom_event") events.push({ name: event.name, data: event.data as ToolCallRepair });
    expect(events).toEqual([
      { name: TOOL_CALL_REPAIR_EVENT, data: repair("a") },
      { name: TOOL_CALL_REPAIR_EVENT, data: repair("b") },
    ]);
  });

  it("with callbacks but no run to attach to (a checkpointer's config), opens a tool_call_repair run for the events", async () => {
    const recorder = new CustomEventRecorder();
    await reportRepairs([repair("a")], {}, { callbacks: [recorder] });
    await awaitAllCallbacks();
    expect(recorder.chains).toEqual([TOOL_CALL_REPAIR_EVENT]);
    expect(recorder.events.map((e) => [e.name, e.data])).toEqual([[TOOL_CALL_REPAIR_EVENT, repair("a")]]);
  });
});
