/**
 * Properties of reasoning-era threads, in the shapes the clients store them, with the incidents of real threads
 * on top (a run aborted mid-tool then a new input, a replayed checkpoint, a duplicate result, a message steered
 * in between a call and its results, a step made by another provider's model):
 * - OpenAI Responses: every assistant message is built by @langchain/openai's own `convertResponsesMessageToAIMessage`
 *   from a response (reasoning item, message item, function calls); the repaired history goes through its own
 *   `convertMessagesToResponsesInput` and must pass R1-R7 against the outputs the server stored.
 * - Gemini 3+: messages as @langchain/google-genai 2.3.2 stores them (`mapGenerateContentResultToChatResult` is
 *   not exported: mirrored, content parts and signature map included); the repaired history goes through
 *   ChatGoogleGenerativeAI's own request builder for a model id the adapter adds no placeholder for, and must
 *   pass G1-G6.
 * Both: nothing is lost (user and assistant text, real tool results, reasoning items, signatures) and a repaired
 * history is repaired to itself.
 */
import fc from "fast-check";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { ChatGoogleGenerativeAI } from "@langchain/google-genai";
import { convertMessagesToResponsesInput, convertResponsesMessageToAIMessage } from "@langchain/openai";
import { describe, expect, it } from "vitest";
import { isCleanHistory, repairToolCalls } from "../../src/engine";
import { validateGeminiContents, validateOpenAIResponsesInput } from "../support/validate";
import { ADAPTERS_PINNED } from "../support/payloads";

const RUNS = Math.max(20, Math.ceil(Number(process.env.PROPERTY_RUNS ?? 1000) / 5));

interface Step {
  reasoning: boolean;
  text: boolean;
  calls: number;
}
interface Turn {
  steps: Step[];
  final: Step;
}
type Incident =
  | { op: "abort"; at: number; keep: number }
  | { op: "replay"; at: number; withResults: boolean }
  | { op: "dupResult"; at: number }
  | { op: "steer"; at: number }
  /** The step was made by another model (another provider's client): the call carries nothing of this client's. */
  | { op: "foreign"; at: number };

const stepArb = (minCalls: number): fc.Arbitrary<Step> =>
  fc.record({
    reasoning: fc.boolean(),
    text: fc.boolean(),
    calls: fc.integer({ min: minCalls, max: minCalls === 0 ? 0 : 3 }),
  });
const turnArb: fc.Arbitrary<Turn> = fc.record({ steps: fc.array(stepArb(1), { maxLength: 3 }), final: stepArb(0) });
const incidentArb: fc.Arbitrary<Incident> = fc.oneof(
  fc.record({ op: fc.constant("abort" as const), at: fc.nat(50), keep: fc.nat(3) }),
  fc.record({ op: fc.constant("replay" as const), at: fc.nat(50), withResults: fc.boolean() }),
  fc.record({ op: fc.constant("dupResult" as const), at: fc.nat(50) }),
  fc.record({ op: fc.constant("steer" as const), at: fc.nat(50) }),
  fc.record({ op: fc.constant("foreign" as const), at: fc.nat(50) }),
);
const threadArb = fc.record({
  turns: fc.array(turnArb, { minLength: 1, maxLength: 3 }),
  incidents: fc.array(incidentArb, { maxLength: 3 }),
  /** The request continues the last turn's tool loop (after its results) instead of asking a new question. */
  midLoop: fc.boolean(),
});

type Dict = Record<string, unknown>;

/**
 * A thread: user questions, then per step the model's message and a result per call. The request is for a new
 * question, or (`midLoop`, when the last turn called tools) the next step of the last turn's tool loop.
 */
function buildThread(turns: Turn[], midLoop: boolean, assistant: (step: Step, n: number) => AIMessage): BaseMessage[] {
  const out: BaseMessage[] = [];
  let n = 0;
  const inLoop = midLoop && turns[turns.length - 1].steps.length > 0;
  turns.forEach((turn, t) => {
    out.push(new HumanMessage({ content: `user question ${t}`, id: `h${t}` }));
    const last = inLoop && t === turns.length - 1;
    for (const step of last ? turn.steps : [...turn.steps, turn.final]) {
      const message = assistant(step.calls === 0 ? { ...step, text: true } : step, ++n);
      out.push(message);
      for (const call of message.tool_calls ?? [])
        out.push(new ToolMessage({ content: `result of ${call.id}`, tool_call_id: call.id!, name: call.name }));
    }
  });
  if (!inLoop) out.push(new HumanMessage({ content: "the question this request asks", id: "next" }));
  return out;
}

/** The incidents, each at the position it picks (modulo the candidates), in order. */
function applyIncidents(history: BaseMessage[], incidents: Incident[]): BaseMessage[] {
  const h = history.slice();
  const callers = () => h.flatMap((m, i) => (AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0 ? [i] : []));
  const blockEnd = (i: number) => {
    let j = i + 1;
    while (j < h.length && ToolMessage.isInstance(h[j])) j++;
    return j;
  };
  for (const incident of incidents) {
    const list = incident.op === "dupResult" ? h.flatMap((m, i) => (ToolMessage.isInstance(m) ? [i] : [])) : callers();
    if (list.length === 0) continue;
    const i = list[incident.at % list.length];
    switch (incident.op) {
      case "abort": {
        // The run died after `keep` results; the next input came as a new message.
        const end = blockEnd(i);
        h.splice(
          i + 1 + Math.min(incident.keep, end - i - 1),
          end - i - 1 - Math.min(incident.keep, end - i - 1),
          new HumanMessage("a new question after the abort"),
        );
        break;
      }
      case "replay": {
        const end = blockEnd(i);
        h.splice(end, 0, h[i], ...(incident.withResults ? h.slice(i + 1, end) : []));
        break;
      }
      case "dupResult":
        h.splice(i + 1, 0, h[i]);
        break;
      case "steer":
        h.splice(i + 1, 0, new HumanMessage("please also check the weekend"));
        break;
      case "foreign": {
        const m = h[i] as AIMessage;
        h[i] = new AIMessage({ id: m.id, content: m.content, tool_calls: m.tool_calls });
        break;
      }
    }
  }
  return h;
}

const textOf = (m: BaseMessage): string => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

/** What must reach the provider: every user question, every assistant text, every real tool result. */
function expectNothingLost(history: BaseMessage[], payload: string): void {
  for (const m of history) {
    if (HumanMessage.isInstance(m) || ToolMessage.isInstance(m)) expect(payload).toContain(textOf(m));
    if (AIMessage.isInstance(m))
      for (const [, text] of textOf(m).matchAll(/(model text \d+)/g)) expect(payload).toContain(text);
  }
}

/** The clean walk (what runs before every model call) says clean exactly when the passes have nothing to do. */
function expectCleanWalkAgrees(
  history: BaseMessage[],
  repaired: { messages: BaseMessage[]; repairs: unknown[] },
  provider: "openai-responses" | "gemini",
): void {
  expect(isCleanHistory(history, { provider })).toBe(repaired.repairs.length === 0 && repaired.messages === history);
  expect(isCleanHistory(repaired.messages, { provider })).toBe(true);
}

// The input is built by @langchain/openai's own converter: checked against the pinned adapter (older ones send it differently).
describe.skipIf(ADAPTERS_PINNED !== undefined)(
  `OpenAI Responses threads with reasoning items${ADAPTERS_PINNED ? ` (skipped: ${ADAPTERS_PINNED})` : ""}`,
  () => {
    const model = "gpt-5.1";
    /** The Responses input @langchain/openai builds for `messages` (zero data retention: items rebuilt, no output re-sent). */
    const inputFor = (messages: BaseMessage[], zdrEnabled = false) =>
      convertMessagesToResponsesInput({ messages, zdrEnabled, model }) as unknown as Dict[];

    /**
     * What the store kept of each assistant message: everything, or (a serializer that drops `response_metadata.output`)
     * its `additional_kwargs` only. Without the output the adapter rebuilds the items from the message, and the text's
     * `message` item goes without its `msg_` id (stored nowhere it reads); a reasoning summary in the content makes such
     * an item too (empty). Summaries come only when asked for (`reasoning.summary`): both kinds of thread are made.
     */
    const STORES = ["everything", "kwargs only"] as const;

    /**
     * The message's output format: v0 (the default), or v1 (`outputVersion: "v1"` or LC_OUTPUT_VERSION=v1) for every
     * message of the thread, or for some (the setting changed mid-thread). A v1 message is what @langchain/core 1.4
     * `castStandardMessageContent` makes of the v0 one (mirrored: not exported): `content` its `contentBlocks` (the
     * reasoning blocks with their `rs_` ids, text, `tool_call` blocks), `output_version: "v1"`, kwargs and the output
     * kept. ChatOpenAI sends such a message from its content blocks, even with the output stored.
     */
    const VERSIONS = ["v0", "v1", "mixed"] as const;
    const asV1 = (message: AIMessage) =>
      new AIMessage({
        ...message,
        content: message.contentBlocks as never,
        response_metadata: { ...message.response_metadata, output_version: "v1" },
      });

    it("repaired, the input @langchain/openai builds passes R1-R7, loses nothing, and is repaired to itself", () => {
      fc.assert(
        fc.property(
          threadArb,
          fc.constantFrom(...STORES),
          fc.boolean(),
          fc.constantFrom(...VERSIONS),
          ({ turns, incidents, midLoop }, store, summaries, version) => {
            const stored: Dict[][] = [];
            const respond = (step: Step, n: number): AIMessage => {
              const output: Dict[] = [];
              if (step.reasoning)
                output.push({
                  type: "reasoning",
                  id: `rs_${n}`,
                  summary: summaries ? [{ type: "summary_text", text: `reasoning ${n}` }] : [],
                });
              if (step.text)
                output.push({
                  type: "message",
                  id: `msg_${n}`,
                  role: "assistant",
                  status: "completed",
                  content: [{ type: "output_text", text: `model text ${n}`, annotations: [] }],
                });
              for (let k = 0; k < step.calls; k++)
                output.push({
                  type: "function_call",
                  id: `fc_${n}_${k}`,
                  call_id: `call_${n}_${k}`,
                  name: "lookup",
                  arguments: JSON.stringify({ q: `${n}.${k}` }),
                  status: "completed",
                });
              stored.push(output);
              const response = {
                id: `resp_${n}`,
                object: "response",
                created_at: 0,
                model,
                status: "completed",
                output,
                usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
              };
              const v0 = convertResponsesMessageToAIMessage(response as never);
              const message = version === "v1" || (version === "mixed" && n % 2 === 0) ? asV1(v0) : v0;
              if (store === "kwargs only") delete message.response_metadata.output;
              return message;
            };
            const history = applyIncidents(buildThread(turns, midLoop, respond), incidents);
            const repaired = repairToolCalls(history, { provider: "openai-responses" });
            const input = inputFor(repaired.messages);
            expect(validateOpenAIResponsesInput(input, { storedOutputs: stored })).toEqual([]);
            // Zero data retention: the adapter rebuilds the items from the message instead of re-sending the output.
            const zdrInput = inputFor(repaired.messages, true);
            expect(validateOpenAIResponsesInput(zdrInput, { storedOutputs: stored })).toEqual([]);
            expectCleanWalkAgrees(history, repaired, "openai-responses");
            // What the stored thread holds (structural repairs), then the request's repair on top: still valid.
            const storedThread = repairToolCalls(history, {
              provider: "openai-responses",
              level: "structural",
            }).messages;
            const later = repairToolCalls(storedThread, { provider: "openai-responses" }).messages;
            const laterInput = inputFor(later);
            expect(validateOpenAIResponsesInput(laterInput, { storedOutputs: stored })).toEqual([]);

            const sent = JSON.stringify(input);
            expectNothingLost(history, sent);
            // Every reasoning item of the thread is sent, once, or (only where the adapter cannot send the item that
            // followed it with its id) reported removed.
            const reasoningIds = new Set(
              history.flatMap((m) =>
                (m.additional_kwargs as Dict).reasoning ? [((m.additional_kwargs as Dict).reasoning as Dict).id] : [],
              ),
            );
            const sentReasoning = input.filter((item) => item.type === "reasoning").map((item) => item.id as string);
            expect(new Set(sentReasoning).size).toBe(sentReasoning.length);
            const reported = JSON.stringify(repaired.repairs);
            const removed = [...reasoningIds].filter((id) => !sentReasoning.includes(id as string));
            if (store === "everything") expect(removed).toEqual([]);
            // Only where the adapter sends a `message` item without an id: the response had text, or a summary; from
            // a v1 message, any item (its text and calls go without their ids).
            const v1Ids = new Set(
              history.filter((m) => (m.response_metadata as Dict).output_version === "v1").map((m) => m.id),
            );
            for (const id of removed) {
              expect(reported).toContain(`${id}`);
              if (!summaries && !v1Ids.has(String(id).replace("rs_", "resp_")))
                expect(JSON.stringify(stored)).toContain(`"${String(id).replace("rs_", "msg_")}"`);
            }
            expect(sentReasoning.every((id) => reasoningIds.has(id))).toBe(true);

            const again = repairToolCalls(repaired.messages, { provider: "openai-responses" });
            expect(again.repairs).toEqual([]);
            expect(again.messages).toBe(repaired.messages);
          },
        ),
        { numRuns: RUNS },
      );
    });

    // Issue 31: a v1 message (`outputVersion: "v1"` or LC_OUTPUT_VERSION=v1; @langchain/core's
    // `castStandardMessageContent`) is sent from its content blocks even when the output is stored: the reasoning
    // block keeps its `rs_` id, the text and the calls go without theirs, so R7 refuses every reasoning step as it is.
    // The Responses request sends it as `output_version: "v0"`: ChatOpenAI re-sends the stored output verbatim.
    it("a v1 message with reasoning, repaired, passes R7 and keeps its reasoning item", () => {
      const output = [
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "reasoning 1" }] },
        { type: "function_call", id: "fc_1", call_id: "call_1", name: "lookup", arguments: "{}", status: "completed" },
      ];
      const response = { id: "resp_1", object: "response", created_at: 0, model, status: "completed", output };
      const stored = convertResponsesMessageToAIMessage({ ...response, usage: undefined } as never);
      const v1 = new AIMessage({
        ...stored,
        content: stored.contentBlocks as never,
        response_metadata: { ...stored.response_metadata, output_version: "v1" },
      });
      const history = [new HumanMessage("q"), v1, new ToolMessage({ content: "r", tool_call_id: "call_1" })];
      const { messages } = repairToolCalls(history, { provider: "openai-responses" });
      const input = inputFor(messages);
      expect(validateOpenAIResponsesInput(input, { storedOutputs: [output] })).toEqual([]);
      // The stored output is re-sent verbatim: the reasoning item goes, with its follower's id.
      expect(input.slice(1, 3)).toEqual(output);
    });
  },
);

describe("Gemini 3+ threads with thought signatures", () => {
  const SIGNATURES = "__gemini_function_call_thought_signatures__";
  // A Gemini 3+ model id without "gemini-3": @langchain/google-genai adds no placeholder of its own.
  const client = new ChatGoogleGenerativeAI({ model: "gemini-4-pro", apiKey: "test-key" });
  const contentsFor = (messages: BaseMessage[]): Dict[] =>
    (
      client as unknown as { _buildGenerateContentRequest(m: BaseMessage[], o: Dict): { contents: Dict[] } }
    )._buildGenerateContentRequest(messages, {}).contents;

  /** The message @langchain/google-genai 2.3.2 stores for a candidate (`mapGenerateContentResultToChatResult`). */
  const respond = (step: Step, n: number): AIMessage => {
    const parts: Dict[] = [];
    if (step.text) parts.push({ text: `model text ${n}` });
    for (let k = 0; k < step.calls; k++)
      parts.push({
        functionCall: { name: "lookup", args: { q: `${n}.${k}` } },
        ...(k === 0 ? { thoughtSignature: `sig_${n}` } : {}),
      });
    const calls = parts.flatMap((p, k) => (p.functionCall ? [{ id: `g${n}-${k}`, part: p }] : []));
    const content =
      parts.length === 1 && parts[0].text !== undefined
        ? (parts[0].text as string)
        : parts.map((p) =>
            p.text !== undefined
              ? { type: "text", text: p.text }
              : { type: "functionCall", functionCall: p.functionCall },
          );
    return new AIMessage({
      content: content as never,
      tool_calls: calls.map(({ id, part }) => ({
        type: "tool_call",
        id,
        name: "lookup",
        args: (part.functionCall as Dict).args as Dict,
      })),
      additional_kwargs: {
        finishReason: "STOP",
        index: 0,
        [SIGNATURES]: Object.fromEntries(
          calls.flatMap(({ id, part }) => (part.thoughtSignature ? [[id, part.thoughtSignature]] : [])),
        ),
      },
    });
  };

  it("repaired, the contents ChatGoogleGenerativeAI builds pass G1-G6, lose nothing, and are repaired to themselves", () => {
    fc.assert(
      fc.property(threadArb, ({ turns, incidents, midLoop }) => {
        const history = applyIncidents(buildThread(turns, midLoop, respond), incidents);
        const repaired = repairToolCalls(history, { provider: "gemini" });
        const contents = contentsFor(repaired.messages);
        expect(validateGeminiContents(contents, { thoughtSignatures: true })).toEqual([]);
        expectCleanWalkAgrees(history, repaired, "gemini");
        const storedThread = repairToolCalls(history, { provider: "gemini", level: "structural" }).messages;
        const later = repairToolCalls(storedThread, { provider: "gemini" }).messages;
        expect(validateGeminiContents(contentsFor(later), { thoughtSignatures: true })).toEqual([]);

        const sent = JSON.stringify(contents);
        expectNothingLost(history, sent);
        // Every signature the model gave is sent back with its call.
        for (const m of history)
          for (const signature of Object.values(((m.additional_kwargs as Dict)[SIGNATURES] ?? {}) as Dict))
            expect(sent).toContain(`"thoughtSignature":"${String(signature)}"`);

        const again = repairToolCalls(repaired.messages, { provider: "gemini" });
        expect(again.repairs).toEqual([]);
        expect(again.messages).toBe(repaired.messages);
      }),
      { numRuns: RUNS },
    );
  });
});
