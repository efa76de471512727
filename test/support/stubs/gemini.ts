/**
 * A local Gemini stub: `POST /v1beta/models/{model}:generateContent` (JSON only) checked with
 * `validateGeminiContents`, G6 included for Gemini 3 and later models. Violations are answered as Google
 * does: HTTP 400 with `{ error: { code: 400, message, status: "INVALID_ARGUMENT" } }`. A Gemini 3+ model signs
 * the first function call of each answer with a `thoughtSignature` (only the first of parallel calls).
 */
import { ChatGoogleGenerativeAI, type GoogleGenerativeAIChatInput } from "@langchain/google-genai";
import { validateGeminiContents } from "../validate";
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

export const DEFAULT_GEMINI_MODEL = "gemini-3-pro-preview";

const GENERATE = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/**
 * Gemini 3 and later check thought signatures (G6): `gemini-3-pro`, `gemini-3.5-flash`, `gemini-4-...`, and the
 * `-latest` aliases (Gemini 3 since 2026).
 */
export function checksThoughtSignatures(model: string): boolean {
  const major = /^gemini-(\d+)/.exec(model)?.[1];
  return major !== undefined ? Number(major) >= 3 : /^gemini-.*-latest$/.test(model);
}

/** `noPrefill` and `requireAlternation` do not apply (G1 and G5 are always checked). */
export async function startGeminiStub(options: StubOptions = {}): Promise<RunningStub> {
  const nextTurn = createTurnSource(options.script);
  const log = new StubLog();

  const server = await startJsonServer(({ method, path, body }): StubReply => {
    log.paths.push(path);
    const route = method === "POST" ? GENERATE.exec(path) : null;
    if (!route) return geminiError(404, `Not found: ${method} ${path}`, "NOT_FOUND");
    const [, model, task] = route;
    const failure = failureFor(body, options, log);
    if (failure)
      return geminiError(
        failure.status,
        failure.message,
        failure.type ?? (failure.status === 429 ? "RESOURCE_EXHAUSTED" : "INVALID_ARGUMENT"),
      );
    const request = asDict(body);
    const violations = validateGeminiContents(request.contents, { thoughtSignatures: checksThoughtSignatures(model) });
    const violation = log.record(body, violationsWith(body, violations, options));
    if (violation) return geminiError(400, violation.message, "INVALID_ARGUMENT");
    if (task !== "generateContent") return geminiError(400, "The local stub does not stream.", "INVALID_ARGUMENT");
    return generateReply(nextTurn(body), model);
  });

  return runningStub(server, log);
}

function geminiError(code: number, message: string, status: string): StubReply {
  return { status: code, json: { error: { code, message, status } } };
}

function generateReply(turn: ScriptedTurn, model: string): StubReply {
  const parts: Dict[] = [];
  if (turn.text !== undefined && turn.text !== "") parts.push({ text: turn.text });
  resolveToolCalls(turn, "").forEach((call, index) => {
    const signed = index === 0 && checksThoughtSignatures(model);
    // Gemini's function calls carry no id unless the caller asked for one: the client makes up a uuid.
    parts.push({
      functionCall: { name: call.name, args: call.args },
      ...(signed ? { thoughtSignature: `sig_${randomIdSuffix(32)}` } : {}),
    });
  });
  return {
    status: 200,
    json: {
      candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: model,
    },
  };
}

/** The real ChatGoogleGenerativeAI against the stub. */
export function geminiModel(
  stub: Pick<RunningStub, "url">,
  fields: Partial<GoogleGenerativeAIChatInput> = {},
): ChatGoogleGenerativeAI {
  return new ChatGoogleGenerativeAI({
    model: DEFAULT_GEMINI_MODEL,
    apiKey: "test-key",
    maxRetries: 0,
    ...fields,
    baseUrl: stub.url,
  });
}
