/**
 * A local Anthropic stub: `POST /v1/messages` (JSON, and SSE when `stream: true`) checked with
 * `validateAnthropicMessages`. Violations are answered as Anthropic does: HTTP 400 with
 * `{ type: "error", error: { type: "invalid_request_error", message } }`.
 */
import { ChatAnthropic, type AnthropicInput } from "@langchain/anthropic";
import type { BaseChatModelParams } from "@langchain/core/language_models/chat_models";
import type { ServerResponse } from "node:http";
import { acceptsSystemInConversation } from "../../../src/models/request-target";
import { validateAnthropicMessages } from "../validate";
import {
  asDict,
  createTurnSource,
  failureFor,
  thinkingRequested,
  violationsWith,
  randomIdSuffix,
  resolveToolCalls,
  runningStub,
  startJsonServer,
  StubLog,
  type RunningStub,
  type ScriptedTurn,
  type StubOptions,
  type StubReply,
} from "./common";

export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6";

/** `noPrefill` defaults to true (Claude 4.6+ models); `requireAlternation` does not apply (the API merges turns). */
export async function startAnthropicStub(options: StubOptions = {}): Promise<RunningStub> {
  const nextTurn = createTurnSource(options.script);
  const noPrefill = options.noPrefill ?? true;
  const log = new StubLog();

  const server = await startJsonServer(({ method, path, body }): StubReply => {
    log.paths.push(path);
    if (method !== "POST" || path.replace(/\/+$/, "") !== "/v1/messages") {
      return anthropicError(404, "not_found_error", `Not found: ${method} ${path}`);
    }
    const request = asDict(body);
    const failure = failureFor(body, options, log);
    if (failure)
      return anthropicError(
        failure.status,
        failure.type ?? ANTHROPIC_ERROR_TYPES[failure.status] ?? "api_error",
        failure.message,
      );
    // A11: only Opus 4.8 and later accept a system message inside `messages`.
    const systemInMessages = acceptsSystemInConversation(typeof request.model === "string" ? request.model : undefined)
      ? "placed"
      : "none";
    // A10: the request's own `thinking` says whether the open tool loop must start with a thinking block.
    const thinking = thinkingRequested(request.thinking);
    const violation = log.record(
      body,
      violationsWith(
        body,
        validateAnthropicMessages(request.messages, { noPrefill, systemInMessages, thinking }),
        options,
      ),
    );
    if (violation) {
      return anthropicError(400, "invalid_request_error", violation.message);
    }
    const turn = nextTurn(body);
    const model = typeof request.model === "string" ? request.model : DEFAULT_ANTHROPIC_MODEL;
    return request.stream === true ? streamReply(turn, model, thinking) : messageReply(turn, model, thinking);
  });

  return runningStub(server, log);
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  429: "rate_limit_error",
  529: "overloaded_error",
};

function anthropicError(status: number, type: string, message: string): StubReply {
  return { status, json: { type: "error", error: { type, message } } };
}

type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** With thinking on, Claude opens its answer with a signed thinking block (A10 checks it on the next request). */
function contentOf(turn: ScriptedTurn, thinking: boolean): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = thinking
    ? [{ type: "thinking", thinking: "stub reasoning", signature: "stub_signature" }]
    : [];
  if (turn.text !== undefined && turn.text !== "") blocks.push({ type: "text", text: turn.text });
  for (const call of resolveToolCalls(turn, "toolu_")) {
    blocks.push({ type: "tool_use", id: call.id, name: call.name, input: call.args });
  }
  return blocks;
}

const stopReasonOf = (blocks: AnthropicBlock[]) =>
  blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn";

function messageReply(turn: ScriptedTurn, model: string, thinking: boolean): StubReply {
  const content = contentOf(turn, thinking);
  return {
    status: 200,
    json: {
      id: `msg_${randomIdSuffix()}`,
      type: "message",
      role: "assistant",
      model,
      content,
      stop_reason: stopReasonOf(content),
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    },
  };
}

function streamReply(turn: ScriptedTurn, model: string, thinking: boolean): StubReply {
  const content = contentOf(turn, thinking);
  const events: [string, unknown][] = [
    [
      "message_start",
      {
        type: "message_start",
        message: {
          id: `msg_${randomIdSuffix()}`,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: 1 },
        },
      },
    ],
  ];
  content.forEach((block, index) => {
    if (block.type === "text") {
      events.push([
        "content_block_start",
        { type: "content_block_start", index, content_block: { type: "text", text: "" } },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } },
      ]);
    } else if (block.type === "thinking") {
      events.push([
        "content_block_start",
        { type: "content_block_start", index, content_block: { type: "thinking", thinking: "" } },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } },
      ]);
    } else {
      const start = { type: "tool_use", id: block.id, name: block.name, input: {} };
      events.push(["content_block_start", { type: "content_block_start", index, content_block: start }]);
      const delta = { type: "input_json_delta", partial_json: JSON.stringify(block.input) };
      events.push(["content_block_delta", { type: "content_block_delta", index, delta }]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: stopReasonOf(content), stop_sequence: null },
      usage: { output_tokens: 5 },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    write: (res: ServerResponse) => {
      for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      res.end();
    },
  };
}

/** The real ChatAnthropic against the stub. */
export function anthropicModel(
  stub: Pick<RunningStub, "url">,
  fields: Partial<AnthropicInput & BaseChatModelParams> = {},
): ChatAnthropic {
  return new ChatAnthropic({
    model: DEFAULT_ANTHROPIC_MODEL,
    apiKey: "sk-ant-test",
    maxRetries: 0,
    ...fields,
    clientOptions: { ...fields.clientOptions, baseURL: stub.url },
  });
}
