/**
 * The rejections of reasoning-era rules, as the real clients get them from the stubs: parsed by
 * `parseToolPairingError`, fixed by `forceRepairToolCalls` from the parse alone, and the fixed request accepted.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it } from "vitest";
import { forceRepairToolCalls } from "../../src/recovery/force-repair";
import { parseToolPairingError } from "../../src/recovery/parse-error";
import {
  geminiModel,
  openAIModel,
  startGeminiStub,
  startOpenAIStub,
  type RunningStub,
  type Script,
} from "../support/stubs";

const running: RunningStub[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});
async function openAIStub(script: Script): Promise<RunningStub> {
  const started = await startOpenAIStub({ script });
  running.push(started);
  return started;
}

type Dict = Record<string, unknown>;
const reasoningModel = (s: RunningStub) =>
  openAIModel(s, { model: "gpt-5.1", useResponsesApi: true, reasoning: { effort: "low" } });

async function rejectionOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to be rejected");
}

/** The reply with its stored output edited by `edit` (what a hand-edited or filtered thread stores). */
function withOutput(reply: AIMessage, edit: (output: Dict[]) => Dict[]): AIMessage {
  const output = (reply.response_metadata as { output: Dict[] }).output;
  return new AIMessage({
    ...reply,
    content: reply.content,
    tool_calls: reply.tool_calls,
    additional_kwargs: reply.additional_kwargs,
    response_metadata: { ...reply.response_metadata, output: edit(output) },
  } as never);
}

describe("Responses reasoning rejections (R6, R7)", () => {
  async function loop(): Promise<{
    openai: RunningStub;
    question: HumanMessage;
    reply: AIMessage;
    result: ToolMessage;
  }> {
    const openai = await openAIStub([
      { text: "checking", toolCalls: [{ name: "get_weather", args: { city: "Paris" } }] },
    ]);
    const question = new HumanMessage("weather?");
    const reply = await reasoningModel(openai).invoke([question]);
    return {
      openai,
      question,
      reply,
      result: new ToolMessage({ content: "sunny", tool_call_id: reply.tool_calls![0].id! }),
    };
  }

  it("R6: an item sent without its reasoning item is parsed with both ids, and force-repair sends it without its id", async () => {
    const { openai, question, reply, result } = await loop();
    const reasoningId = (reply.additional_kwargs.reasoning as Dict).id as string;
    const history: BaseMessage[] = [
      question,
      withOutput(reply, (output) => output.filter((item) => item.type !== "reasoning")),
      result,
    ];
    const error = await rejectionOf(() => reasoningModel(openai).invoke(history));
    const rejection = parseToolPairingError(error, { messages: history })!;
    const messageId = (reply.response_metadata as { output: Dict[] }).output[1].id;
    expect(rejection).toMatchObject({
      rule: "R6",
      kind: "reasoning_item_unpaired",
      provider: "openai-responses",
      toolCallIds: [messageId, reasoningId],
    });
    const forced = forceRepairToolCalls(history, rejection);
    expect(forced.repairs[0]).toMatchObject({ action: "rebuilt_message", index: 1 });
    await reasoningModel(openai).invoke(forced.messages);
    expect(openai.rejections.map((r) => r.rule)).toEqual(["R6"]);
    expect((forced.messages[1] as AIMessage).content).toEqual(reply.content);
  });

  it("R7: a reasoning item left without its following item is parsed, and force-repair removes it", async () => {
    const { openai, question, reply, result } = await loop();
    const reasoningId = (reply.additional_kwargs.reasoning as Dict).id as string;
    // The message item that followed the reasoning item was filtered out of the stored output.
    const history: BaseMessage[] = [
      question,
      withOutput(reply, (output) => output.filter((item) => item.type !== "message")),
      result,
    ];
    const error = await rejectionOf(() => reasoningModel(openai).invoke(history));
    const rejection = parseToolPairingError(error)!;
    expect(rejection).toMatchObject({ rule: "R7", kind: "reasoning_item_unpaired", toolCallIds: [reasoningId] });
    const forced = forceRepairToolCalls(history, rejection);
    expect(forced.repairs[0].detail).toContain(`reasoning items ${reasoningId} removed`);
    await reasoningModel(openai).invoke(forced.messages);
    expect(openai.rejections.map((r) => r.rule)).toEqual(["R7"]);
  });
});

describe("Gemini thought signature rejection (G6)", () => {
  it("is parsed, and force-repair gives every unsigned step Google's placeholder", async () => {
    const gemini = await startGeminiStub();
    running.push(gemini);
    const model = geminiModel(gemini, { model: "gemini-flash-latest" });
    const history: BaseMessage[] = [
      new HumanMessage("weather?"),
      new AIMessage({ content: "", tool_calls: [{ id: "x", name: "get_weather", args: {} }] }),
      new ToolMessage({ content: "sunny", tool_call_id: "x", name: "get_weather" }),
    ];
    const error = await rejectionOf(() => model.invoke(history));
    const rejection = parseToolPairingError(error)!;
    expect(rejection).toMatchObject({
      rule: "G6",
      kind: "missing_thought_signature",
      provider: "gemini",
      toolCallIds: [],
    });
    const forced = forceRepairToolCalls(history, rejection);
    expect(forced.repairs.map((r) => [r.problem, r.toolCallId])).toEqual([["unsigned_call", "x"]]);
    await model.invoke(forced.messages);
    expect(gemini.rejections.map((r) => r.rule)).toEqual(["G6"]);
  });
});
