/**
 * A local OpenAI stub: `POST /v1/chat/completions` (JSON, and SSE when `stream: true`) checked with
 * `validateOpenAIChatMessages`, and `POST /v1/responses` (JSON only) checked with
 * `validateOpenAIResponsesInput` against the outputs it returned (R6, R7: it stores them, as OpenAI does). A
 * Responses request with `reasoning` set gets a reasoning item (`rs_`) before the scripted output, as a
 * reasoning model answers. Violations are answered as OpenAI does: HTTP 400 with
 * `{ error: { message, type, param, code } }`.
 */
import { ChatOpenAI, type ChatOpenAIFields } from "@langchain/openai";
import type { ServerResponse } from "node:http";
import { validateOpenAIChatMessages, validateOpenAIResponsesInput } from "../validate";
import {
  asDict,
  createTurnSource,
  failureFor,
  violationsWith,
  randomIdSuffix,
  resolveToolCalls,
  runningStub,
  startJsonServer,
  StubLog,
  type Dict,
  type RunningStub,
  type ScriptedTurn,
  type StubOptions,
  type StubReply,
} from "./common";

export const DEFAULT_OPENAI_MODEL = "gpt-4.1-mini";

/** `noPrefill` and `requireAlternation` do not apply to OpenAI and are ignored. */
export async function startOpenAIStub(options: StubOptions = {}): Promise<RunningStub> {
  const nextTurn = createTurnSource(options.script);
  const log = new StubLog();
  const storedOutputs: unknown[][] = [];

  const server = await startJsonServer(({ method, path, body }): StubReply => {
    log.paths.push(path);
    const endpoint = method === "POST" ? path.replace(/\/+$/, "") : "";
    if (endpoint !== "/v1/chat/completions" && endpoint !== "/v1/responses") {
      return openAIError(404, `Unknown request URL: ${method} ${path}.`, "invalid_request_error", null);
    }
    const request = asDict(body);
    const isChat = endpoint === "/v1/chat/completions";
    const failure = failureFor(body, options, log);
    if (failure)
      return openAIError(
        failure.status,
        failure.message,
        failure.status === 429 ? "requests" : "invalid_request_error",
        null,
        failure.type,
      );
    const violation = log.record(
      body,
      violationsWith(
        body,
        isChat
          ? validateOpenAIChatMessages(request.messages)
          : validateOpenAIResponsesInput(request.input, { storedOutputs }),
        options,
      ),
    );
    if (violation) {
      return openAIError(400, violation.message, "invalid_request_error", isChat ? "messages" : "input");
    }
    if (!isChat && request.stream === true) {
      return openAIError(400, "The local stub does not stream the Responses API.", "invalid_request_error", "stream");
    }
    const turn = nextTurn(body);
    const model = typeof request.model === "string" ? request.model : DEFAULT_OPENAI_MODEL;
    if (!isChat) return responsesReply(turn, model, request.reasoning !== undefined, storedOutputs);
    return request.stream === true ? chatStreamReply(turn, model) : chatReply(turn, model);
  });

  return runningStub(server, log);
}

function openAIError(
  status: number,
  message: string,
  type: string,
  param: string | null,
  code: string | null = null,
): StubReply {
  return { status, json: { error: { message, type, param, code } } };
}

const CHAT_USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function chatToolCalls(turn: ScriptedTurn) {
  return resolveToolCalls(turn, "call_").map((call) => ({
    id: call.id,
    type: "function" as const,
    function: { name: call.name, arguments: JSON.stringify(call.args) },
  }));
}

function chatReply(turn: ScriptedTurn, model: string): StubReply {
  const toolCalls = chatToolCalls(turn);
  return {
    status: 200,
    json: {
      id: `chatcmpl-${randomIdSuffix()}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: turn.text ?? (toolCalls.length > 0 ? null : ""),
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            refusal: null,
          },
          logprobs: null,
          finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop",
        },
      ],
      usage: CHAT_USAGE,
    },
  };
}

function chatStreamReply(turn: ScriptedTurn, model: string): StubReply {
  const id = `chatcmpl-${randomIdSuffix()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Dict, finishReason: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const toolCalls = chatToolCalls(turn);
  const chunks: unknown[] = [chunk({ role: "assistant", content: "" })];
  if (turn.text) chunks.push(chunk({ content: turn.text }));
  toolCalls.forEach((call, index) => chunks.push(chunk({ tool_calls: [{ index, ...call }] })));
  chunks.push(chunk({}, toolCalls.length > 0 ? "tool_calls" : "stop"));
  chunks.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage: CHAT_USAGE });
  return {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    write: (res: ServerResponse) => {
      for (const data of chunks) res.write(`data: ${JSON.stringify(data)}\n\n`);
      res.end("data: [DONE]\n\n");
    },
  };
}

function responsesReply(turn: ScriptedTurn, model: string, reasoning: boolean, stored: unknown[][]): StubReply {
  const output: Dict[] = [];
  if (reasoning) {
    output.push({
      type: "reasoning",
      id: `rs_${randomIdSuffix()}`,
      summary: [{ type: "summary_text", text: "thinking it over" }],
    });
  }
  if (turn.text !== undefined && turn.text !== "") {
    output.push({
      type: "message",
      id: `msg_${randomIdSuffix()}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    });
  }
  for (const call of resolveToolCalls(turn, "call_")) {
    output.push({
      type: "function_call",
      id: `fc_${randomIdSuffix()}`,
      call_id: call.id,
      name: call.name,
      arguments: JSON.stringify(call.args),
      status: "completed",
    });
  }
  stored.push(output);
  return {
    status: 200,
    json: {
      id: `resp_${randomIdSuffix()}`,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      model,
      output,
      output_text: turn.text ?? "",
      usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
    },
  };
}

/** The real ChatOpenAI against the stub (Chat Completions; `fields.useResponsesApi` for Responses). */
export function openAIModel(stub: Pick<RunningStub, "url">, fields: Partial<ChatOpenAIFields> = {}): ChatOpenAI {
  return new ChatOpenAI({
    model: DEFAULT_OPENAI_MODEL,
    apiKey: "sk-test",
    maxRetries: 0,
    ...fields,
    configuration: { ...fields.configuration, baseURL: `${stub.url}/v1` },
  });
}
