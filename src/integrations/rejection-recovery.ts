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
import { forceRepairToolCalls, recoveryProvider, retryOnce } from "../recovery/force-repair";
import type { ProviderRejection, RepairOptions, RepairResult } from "../types";
import { reportRepairs } from "./events";
import { replaceAllMessages } from "./state-update";
import { isDict } from "../values";

/** The parts of langchain's `ModelRequest` the recovery reads. */
interface RecoverableModelRequest {
  messages: BaseMessage[];
  systemMessage?: SystemMessage;
  systemPrompt?: string;
  state?: { messages?: BaseMessage[] };
}

/**
 * `handler(request)`, recovered once from a history rejection. Returns the handler's answer, or a `Command`
 * that also persists the repaired history.
 */
export async function callWithRejectionRecovery<Request extends RecoverableModelRequest, Response>(
  request: Request,
  handler: (request: Request) => Response | Promise<Response>,
  options: RepairOptions,
  recovered?: (rejection: ProviderRejection) => void,
) {
  try {
    return await handler(request);
  } catch (error) {
    const { messages, systemMessage, systemPrompt, state } = request;
    // The system prompt createAgent puts before the request's messages (empty ones are not sent).
    const system = systemMessage?.text ? systemMessage : systemPrompt ? new SystemMessage(systemPrompt) : undefined;
    const { answer: response, ...step } = await retryOnce(
      error,
      messages,
      { ...options, ...(system && { sent: { messages: [system, ...messages], offset: 1 } }) },
      (retried) => handler({ ...request, messages: retried }),
    );
    recovered?.(step.rejection);
    // The thread's messages with the same fix. The request may differ from the state (the middleware's own
    // request-only repair, another middleware's edits): the rejection is applied to the state itself, its
    // position carried over by message identity, so only the state's own messages are written back. What the
    // rejection names is answered in the thread too; the rest of what is stored gets structural repairs only
    // (the retried request itself was shaped for the provider: that is never stored).
    let fixed: RepairResult | undefined;
    if (Array.isArray(state?.messages)) {
      const { messageIndex, ...rest } = step.rejection;
      const at = state.messages.indexOf(messages[messageIndex ?? -1]);
      const rejection = at === -1 ? rest : { ...rest, messageIndex: at };
      const { onRepair: _reported, ...engineOptions } = options;
      fixed = forceRepairToolCalls(state.messages, rejection, {
        ...engineOptions,
        provider: recoveryProvider(options.provider, rejection),
        level: "structural",
      });
    }
    if (!fixed?.repairs.length) {
      await reportRepairs(step.repairs, options, { surface: "recovery", request: true });
      return response;
    }
    await reportRepairs(fixed.repairs, options, { surface: "recovery" });
    // The answer, plus the replacement of the thread's list by the repaired history and the answer.
    if (AIMessage.isInstance(response))
      return new Command({ update: { messages: replaceAllMessages([...fixed.messages, response]) } });
    // A structured result: createAgent writes `[...state.messages, ...response.messages]`, the marker drops
    // everything before it.
    if (isDict(response) && "structuredResponse" in response && Array.isArray(response.messages))
      return { ...response, messages: [...replaceAllMessages(fixed.messages), ...response.messages] };
    return response;
  }
}
