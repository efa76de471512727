/**
 * Shared pieces of the local provider stubs: the script format, the running-stub handle, and a tiny
 * node:http server that parses JSON bodies. Each stub (bedrock.ts, openai.ts, anthropic.ts) validates the
 * request with the payload validator of its wire format and either rejects it the way the provider does
 * or answers with the next scripted turn.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type Dict = Record<string, unknown>;

/** A request field as a record: `{}` for anything that is not one (a stub reads what a client sent, whatever it is). */
export const asDict = (v: unknown): Dict =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Dict) : {};

export interface ScriptedToolCall {
  id?: string;
  name: string;
  args: Record<string, unknown>;
}

export interface ScriptedTurn {
  text?: string;
  toolCalls?: ScriptedToolCall[];
}

export type Script = ScriptedTurn[] | ((request: unknown, callIndex: number) => ScriptedTurn);

export interface StubOptions {
  /** Default: always answer the text "ok". An array is consumed turn by turn, then "ok". */
  script?: Script;
  /** Reject a request that ends on an assistant turn (Bedrock B7, Anthropic A8). Default true where it applies. */
  noPrefill?: boolean;
  /** Bedrock only: reject two user (or two assistant) turns in a row (B6). Default true. */
  requireAlternation?: boolean;
  /**
   * Answer with an error instead of checking the request (rate limits, context length, 5xx). Called for every
   * request with its 0-based index among all requests.
   */
  fail?: (request: unknown, requestIndex: number) => StubFailure | undefined;
  /** A rule of the test's own, checked when the provider's rules pass: the rejection to answer with, if any. */
  extraRule?: (request: unknown) => Rejection | undefined;
}

export interface Rejection {
  rule: string;
  message: string;
}

/** An error the stub answers with: HTTP status, message, and the provider's error type or code (default per status). */
export interface StubFailure {
  status: number;
  message: string;
  type?: string;
  /**
   * Bedrock converse-stream only: answer 200, start the message, then send the error as an exception event of
   * the stream (as Bedrock does for an error found after the stream began); `type` is then the event's
   * exception type (default `validationException`).
   */
  midStream?: boolean;
}

/** The rejection a request gets: the first broken provider rule, else the test's own rule. */
export function violationsWith(request: unknown, violations: Rejection[], options: StubOptions): Rejection[] {
  if (violations.length > 0 || !options.extraRule) return violations;
  const extra = options.extraRule(request);
  return extra ? [extra] : [];
}

/** The failure to answer `request` with, recorded like a rejection (rule `HTTP <status>`). */
export function failureFor(request: unknown, options: StubOptions, log: StubLog): StubFailure | undefined {
  const failure = options.fail?.(request, log.calls);
  if (failure) log.record(request, [{ rule: `HTTP ${failure.status}`, message: failure.message }]);
  return failure;
}

export interface RunningStub {
  url: string;
  port: number;
  /** Every parsed request body, accepted or rejected, in arrival order. */
  requests: unknown[];
  /** The path of every request received, in arrival order. */
  paths: string[];
  /** One entry per rejected request: the first violation, which is what the stub answered. */
  rejections: Rejection[];
  /** Number of requests received (accepted and rejected). Scripted turns are consumed by accepted ones only. */
  calls: number;
  close(): Promise<void>;
}

export const DEFAULT_TURN: ScriptedTurn = { text: "ok" };

/** Hands out scripted turns: `callIndex` counts accepted requests only, so a rejection does not skip a turn. */
export function createTurnSource(script: Script | undefined): (request: unknown) => ScriptedTurn {
  let accepted = 0;
  return (request) => {
    const callIndex = accepted++;
    if (script === undefined) return DEFAULT_TURN;
    if (typeof script === "function") return script(request, callIndex);
    return script[callIndex] ?? DEFAULT_TURN;
  };
}

/** A provider-looking random id suffix (letters and digits only, so every provider pattern accepts it). */
export function randomIdSuffix(length = 24): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}

/** The scripted tool calls with ids filled in (`prefix` + random) where the script left them out. */
export function resolveToolCalls(
  turn: ScriptedTurn,
  prefix: string,
): { id: string; name: string; args: Record<string, unknown> }[] {
  return (turn.toolCalls ?? []).map((call) => ({
    id: call.id ?? `${prefix}${randomIdSuffix()}`,
    name: call.name,
    args: call.args,
  }));
}

export interface StubRequest {
  method: string;
  path: string;
  body: unknown;
}

/** What a route handler does with a request: answer JSON, or write the response itself (streams). */
export type StubReply =
  | { status: number; json: unknown; headers?: Record<string, string> }
  | { status: number; write: (res: ServerResponse) => void; headers?: Record<string, string> };

export type StubHandler = (request: StubRequest) => StubReply;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export interface StubServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Starts a node:http server on 127.0.0.1 with an OS-chosen port. */
export async function startJsonServer(handler: StubHandler): Promise<StubServer> {
  const server = createServer((req, res) => {
    readBody(req)
      .then((text) => {
        const path = decodeURIComponent((req.url ?? "/").split("?")[0]);
        const reply = handler({ method: req.method ?? "GET", path, body: parseJson(text) });
        if ("json" in reply) {
          const payload = JSON.stringify(reply.json);
          res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
          res.end(payload);
        } else {
          res.writeHead(reply.status, reply.headers ?? {});
          reply.write(res);
        }
      })
      .catch((error: unknown) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: String(error) }));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** What a stub records: every request body, every rejection, and the number of requests. */
export class StubLog {
  readonly requests: unknown[] = [];
  /** The path of every request, in arrival order (Bedrock streams on its own endpoint, `/converse-stream`). */
  readonly paths: string[] = [];
  readonly rejections: Rejection[] = [];
  calls = 0;

  /** Records one request and returns the violation the stub answers with, if any (the first one). */
  record<V extends Rejection>(body: unknown, violations: V[]): V | undefined {
    this.calls++;
    this.requests.push(body);
    const violation = violations[0];
    if (violation) this.rejections.push({ rule: violation.rule, message: violation.message });
    return violation;
  }
}

/** The handle a test gets for a stub started on `server`. */
export function runningStub(server: StubServer, log: StubLog): RunningStub {
  return {
    url: server.url,
    port: server.port,
    requests: log.requests,
    paths: log.paths,
    rejections: log.rejections,
    get calls() {
      return log.calls;
    },
    close: server.close,
  };
}

/** Whether a request's `thinking` field (Anthropic, or Bedrock's `additionalModelRequestFields.thinking`) turns thinking on. */
export function thinkingRequested(value: unknown): boolean {
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  return type === "enabled" || type === "adaptive";
}
