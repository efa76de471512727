/** Tiny fake models for the summarization tests (no network). */
import type { BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import type { SummarizerModel } from "../../src/summarize/summarize";
import { contentText } from "../../src/summarize/summarize";

/**
 * An agent model: after a user message it calls `lookup` twice in parallel; after tool results it answers.
 * Records every input it was given.
 */
export class ScriptedToolModel extends BaseChatModel {
  readonly inputs: BaseMessage[][] = [];
  private calls = 0;

  constructor(fields: BaseChatModelParams = {}) {
    super(fields);
  }

  _llmType(): string {
    return "scripted-tool-model";
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.inputs.push(messages);
    const last = messages[messages.length - 1];
    const message = ToolMessage.isInstance(last) ? new AIMessage("Here is what I found.") : this.parallelCalls();
    return { generations: [{ text: contentText(message.content), message }] };
  }

  private parallelCalls(): AIMessage {
    const ids = [++this.calls, ++this.calls].map((n) => `call_${n}`);
    return new AIMessage({
      content: "",
      tool_calls: ids.map((id, i) => ({ id, name: "lookup", args: { page: i }, type: "tool_call" as const })),
    });
  }
}

/** A summarizer that answers `summary #n` and records each prompt it got. */
export class RecordingSummarizer implements SummarizerModel {
  readonly prompts: string[] = [];

  async invoke(input: BaseMessage[]): Promise<AIMessage> {
    this.prompts.push(input.map((m) => contentText(m.content)).join("\n"));
    return new AIMessage(`summary #${this.prompts.length}`);
  }
}
