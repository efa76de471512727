/**
 * A local Bedrock Runtime stub: `POST /model/<modelId>/converse` (JSON) and `/converse-stream` (AWS event
 * stream). Every request is checked with `validateBedrockConverse`; a violation is answered the way Bedrock
 * does (HTTP 400, `ValidationException`), so the real AWS SDK and ChatBedrockConverse raise the real error.
 */
import { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { ChatBedrockConverse, type ChatBedrockConverseInput } from "@langchain/aws";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import type { ServerResponse } from "node:http";
import { validateBedrockConverse } from "../validate";
import { constrainedTurn, structuredOutputViolations } from "./bedrock-structured";
import {
  createTurnSource,
  failureFor,
  thinkingRequested,
  violationsWith,
  resolveToolCalls,
  runningStub,
  startJsonServer,
  StubLog,
  type RunningStub,
  type ScriptedTurn,
  type StubOptions,
  type StubReply,
} from "./common";

export const DEFAULT_BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-6-v1:0";

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

export async function startBedrockStub(options: StubOptions = {}): Promise<RunningStub> {
  const nextTurn = createTurnSource(options.script);
  const validation = { noPrefill: options.noPrefill ?? true, requireAlternation: options.requireAlternation ?? true };
  const log = new StubLog();

  const server = await startJsonServer(({ method, path, body }): StubReply => {
    log.paths.push(path);
    const route = ROUTE.exec(path);
    if (method !== "POST" || !route)
      return awsError(404, "UnknownOperationException", `No route for ${method} ${path}`);
    const failure = failureFor(body, options, log);
    if (failure?.midStream && route[2] === "converse-stream")
      return midStreamError(failure.type ?? "validationException", failure.message);
    if (failure)
      return awsError(
        failure.status,
        failure.type ?? AWS_ERROR_CODES[failure.status] ?? "InternalServerException",
        failure.message,
      );
    // B11: reasoning is on when the request asks for it (`additionalModelRequestFields.thinking`).
    const fields =
      typeof body === "object" && body !== null
        ? (body as { additionalModelRequestFields?: { thinking?: unknown } }).additionalModelRequestFields
        : undefined;
    const reasoning = thinkingRequested(fields?.thinking);
    const violations = [
      ...validateBedrockConverse(body, { ...validation, reasoning }),
      ...structuredOutputViolations(route[1], body),
    ];
    const violation = log.record(body, violationsWith(body, violations, options));
    if (violation) {
      return awsError(400, "ValidationException", violation.message);
    }
    const turn = constrainedTurn(nextTurn(body), body);
    return route[2] === "converse" ? converseReply(turn, reasoning) : converseStreamReply(turn, reasoning);
  });

  return runningStub(server, log);
}

const AWS_ERROR_CODES: Record<number, string> = {
  400: "ValidationException",
  429: "ThrottlingException",
  503: "ServiceUnavailableException",
};

/** restJson1 error: the SDK reads the error code from `x-amzn-errortype` and `.message` from the body. */
function awsError(status: number, code: string, message: string): StubReply {
  return {
    status,
    headers: { "x-amzn-errortype": `${code}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
    json: { __type: code, message },
  };
}

interface ConverseBlock {
  text?: string;
  reasoningContent?: { reasoningText: { text: string; signature: string } };
  toolUse?: { toolUseId: string; name: string; input: Record<string, unknown> };
}

/** With reasoning on, Claude opens its answer with signed reasoning (B11 checks it on the next request). */
function contentOf(turn: ScriptedTurn, reasoning: boolean): ConverseBlock[] {
  const blocks: ConverseBlock[] = reasoning
    ? [{ reasoningContent: { reasoningText: { text: "stub reasoning", signature: "stub_signature" } } }]
    : [];
  if (turn.text !== undefined && turn.text !== "") blocks.push({ text: turn.text });
  for (const call of resolveToolCalls(turn, "tooluse_")) {
    blocks.push({ toolUse: { toolUseId: call.id, name: call.name, input: call.args } });
  }
  return blocks;
}

const stopReasonOf = (blocks: ConverseBlock[]): string => (blocks.some((b) => b.toolUse) ? "tool_use" : "end_turn");
const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

function converseReply(turn: ScriptedTurn, reasoning: boolean): StubReply {
  const content = contentOf(turn, reasoning);
  return {
    status: 200,
    json: {
      output: { message: { role: "assistant", content } },
      stopReason: stopReasonOf(content),
      usage: USAGE,
      metrics: { latencyMs: 1 },
    },
  };
}

function converseStreamReply(turn: ScriptedTurn, reasoning: boolean): StubReply {
  const content = contentOf(turn, reasoning);
  const events: [string, unknown][] = [["messageStart", { role: "assistant" }]];
  content.forEach((block, contentBlockIndex) => {
    if (block.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      events.push(["contentBlockStart", { contentBlockIndex, start: { toolUse: { toolUseId, name } } }]);
      events.push(["contentBlockDelta", { contentBlockIndex, delta: { toolUse: { input: JSON.stringify(input) } } }]);
    } else if (block.reasoningContent) {
      const { text, signature } = block.reasoningContent.reasoningText;
      events.push(["contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { text } } }]);
      events.push(["contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { signature } } }]);
    } else {
      events.push(["contentBlockDelta", { contentBlockIndex, delta: { text: block.text ?? "" } }]);
    }
    events.push(["contentBlockStop", { contentBlockIndex }]);
  });
  events.push(["messageStop", { stopReason: stopReasonOf(content) }]);
  events.push(["metadata", { usage: USAGE, metrics: { latencyMs: 1 } }]);
  return {
    status: 200,
    headers: { "content-type": "application/vnd.amazon.eventstream" },
    write: (res: ServerResponse) => {
      for (const [type, payload] of events) res.write(encodeEvent(type, payload));
      res.end();
    },
  };
}

/** A stream that starts the message, then fails with an exception event (`:message-type: exception`). */
function midStreamError(exceptionType: string, message: string): StubReply {
  return {
    status: 200,
    headers: { "content-type": "application/vnd.amazon.eventstream" },
    write: (res: ServerResponse) => {
      res.write(encodeEvent("messageStart", { role: "assistant" }));
      const headers = {
        ":exception-type": exceptionType,
        ":content-type": "application/json",
        ":message-type": "exception",
      };
      res.write(encodeFrame(headers, { message }));
      res.end();
    },
  };
}

// --- AWS event stream framing (application/vnd.amazon.eventstream) -----------------------------------------

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** String headers only (value type 7): name length (1 byte), name, type, value length (2 bytes), value. */
function encodeHeaders(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const nameBytes = Buffer.from(name, "utf8");
    const valueBytes = Buffer.from(value, "utf8");
    const head = Buffer.alloc(1 + nameBytes.length + 3);
    head.writeUInt8(nameBytes.length, 0);
    nameBytes.copy(head, 1);
    head.writeUInt8(7, 1 + nameBytes.length);
    head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
    parts.push(head, valueBytes);
  }
  return Buffer.concat(parts);
}

/** One frame: total length, headers length, prelude CRC, headers, payload, message CRC. */
export function encodeEvent(eventType: string, payload: unknown): Buffer {
  return encodeFrame(
    { ":event-type": eventType, ":content-type": "application/json", ":message-type": "event" },
    payload,
  );
}

function encodeFrame(headerValues: Record<string, string>, payload: unknown): Buffer {
  const headers = encodeHeaders(headerValues);
  const body = Buffer.from(JSON.stringify(payload), "utf8");
  const total = 12 + headers.length + body.length + 4;
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headers.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(crc32(prelude), 0);
  const withoutCrc = Buffer.concat([prelude, preludeCrc, headers, body]);
  const messageCrc = Buffer.alloc(4);
  messageCrc.writeUInt32BE(crc32(withoutCrc), 0);
  return Buffer.concat([withoutCrc, messageCrc]);
}

// --- client factory -------------------------------------------------------------------------------------

/** The real ChatBedrockConverse, talking HTTP/1.1 to the stub, failing fast on a 400. */
export function bedrockModel(
  stub: Pick<RunningStub, "url">,
  fields: Partial<ChatBedrockConverseInput> = {},
): ChatBedrockConverse {
  const credentials = { accessKeyId: "x", secretAccessKey: "x" };
  return new ChatBedrockConverse({
    model: DEFAULT_BEDROCK_MODEL,
    region: "us-east-1",
    credentials,
    maxRetries: 0,
    client: new BedrockRuntimeClient({
      region: "us-east-1",
      endpoint: stub.url,
      credentials,
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    }),
    ...fields,
  });
}
