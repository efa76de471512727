/**
 * The middleware's last line of defence: a model call the provider rejects for its history (a rule the
 * engine does not model, a history repaired for another provider) is force-repaired and sent once more.
 *
 * When the retry succeeds, the fix is persisted in the same step: `wrapModelCall` returns a `Command` whose
 * messages update replaces the thread's list (`REMOVE_ALL_MESSAGES`, the repaired history, the answer).
 * createAgent applies it after its own update of the answer, so the thread holds the repaired history and
 * the answer once; the next turn starts from it. A structured response (tool strategy) carries the same
 * replacement in its `messages`. The repairs reach `onRepair` and the `tool_call_repair` event, each with
 * its `rejection`.
 *
 * A second rejection rethrows the ORIGINAL error, the diagnosis attached (`toolCallRejection`, and `cause`
 * when it had none). Errors that are not about the history are rethrown untouched and never retried.
 */
import { AIMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { forceRepairToolCalls } from "../recovery/force-repair";
import { recoveryFailed, recoveryProvider, recoveryStep, type RecoveryStep } from "../recovery/retry";
import type { ProviderRejection, RepairOptions, ToolCallRepair } from "../types";
import { reportRepairs } from "./events";
import { replaceAllMessages } from "./state-update";
import { isDict } from "../values";

/** The parts of langchain's `ModelRequest` the recovery reads. */
export interface RecoverableModelRequest {
  messages: BaseMessage[];
  systemMessage?: SystemMessage;
  systemPrompt?: string;
  state?: { messages?: BaseMessage[] };
}

type Retry = Extract<RecoveryStep, { action: "retry" }>;

/**
 * `handler(request)`, recovered once from a history rejection. Returns the handler's answer, or a `Command`
 * that also persists the repaired history.
 */
export async function callWithRejectionRecovery<Request extends RecoverableModelRequest, Response>(
  request: Request,
  handler: (request: Request) => Response | Promise<Response>,
  options: RepairOptions,
): Promise<Response | Command> {
  try {
    return await handler(request);
  } catch (error) {
    const system = systemMessageOf(request);
    const step = recoveryStep(error, request.messages, {
      ...options,
      ...(system ? { sent: { messages: [system, ...request.messages], offset: 1 } } : {}),
    });
    if (step.action === "rethrow") throw step.error;
    let response: Response;
    try {
      response = await handler({ ...request, messages: step.messages });
    } catch (retryError) {
      throw recoveryFailed(error, step, retryError);
    }
    const persisted = persistedFix(request, step, options);
    if (persisted?.repairs.length) await reportRepairs(persisted.repairs, options);
    else await reportRepairs(step.repairs, options, undefined, "request");
    return persisted ? withReplacement(response, persisted.messages) : response;
  }
}

/** The system prompt createAgent puts before the request's messages (empty ones are not sent). */
function systemMessageOf(request: RecoverableModelRequest): SystemMessage | undefined {
  if (request.systemMessage && request.systemMessage.text !== "") return request.systemMessage;
  return request.systemPrompt ? new SystemMessage(request.systemPrompt) : undefined;
}

/**
 * The thread's messages with the same fix. The request may differ from the state (the middleware's own
 * request-only repair, another middleware's edits): the rejection is applied to the state itself, its
 * position carried over by message identity, so only the state's own messages are written back.
 */
function persistedFix(
  request: RecoverableModelRequest,
  step: Retry,
  options: RepairOptions,
): { messages: BaseMessage[]; repairs: ToolCallRepair[] } | undefined {
  const state = request.state?.messages;
  if (!Array.isArray(state)) return undefined;
  const rejection = inState(step.rejection, request.messages, state);
  const { onRepair: _reported, ...engineOptions } = options;
  // What the rejection names is answered in the thread too; the rest of what is stored gets structural
  // repairs only (the retried request itself was shaped for the provider: that is never stored).
  const fixed = forceRepairToolCalls(state, rejection, {
    ...engineOptions,
    provider: recoveryProvider(options.provider, rejection),
    level: "structural",
  });
  return fixed.repairs.length > 0 ? fixed : undefined;
}

function inState(rejection: ProviderRejection, sent: BaseMessage[], state: BaseMessage[]): ProviderRejection {
  const { messageIndex, ...rest } = rejection;
  if (messageIndex === undefined) return rejection;
  const target = sent[messageIndex];
  const index = target === undefined ? -1 : state.indexOf(target);
  return index === -1 ? rest : { ...rest, messageIndex: index };
}

/** The answer, plus the replacement of the thread's list by the repaired history and the answer. */
function withReplacement<Response>(response: Response, repaired: BaseMessage[]): Response | Command {
  if (AIMessage.isInstance(response)) {
    return new Command({ update: { messages: replaceAllMessages([...repaired, response]) } });
  }
  if (isStructuredResult(response)) {
    // createAgent writes `[...state.messages, ...response.messages]`: the marker drops everything before it.
    return { ...response, messages: [...replaceAllMessages(repaired), ...response.messages] };
  }
  return response;
}

const isStructuredResult = (value: unknown): value is { structuredResponse: unknown; messages: BaseMessage[] } =>
  isDict(value) && "structuredResponse" in value && Array.isArray(value.messages);
