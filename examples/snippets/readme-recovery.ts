import { bedrockChat, brokenThread, closeStubs, searchFlights, searchHotels } from "./_support";

const model = (await bedrockChat()).bindTools([searchFlights, searchHotels]);
const messages = brokenThread();

// #region docs
import { forceRepairToolCalls, parseToolPairingError } from "langgraph-tool-repair";

// model: a chat model with its tools bound; messages: a thread's history, broken.
try {
  await model.invoke(messages); // unrepaired: the AWS SDK throws Bedrock's ValidationException
} catch (error) {
  const rejection = parseToolPairingError(error, { messages });
  if (!rejection) throw error; // rate limits, context length, auth, network: not about the history
  console.log(rejection.provider, rejection.kind, rejection.rule, rejection.toolCallIds, rejection.messageIndex);

  const { messages: fixed, repairs } = forceRepairToolCalls(messages, rejection);
  console.log(repairs.map((r) => `${r.action} ${r.toolCallId ?? ""}`));
  const answer = await model.invoke(fixed); // the same model, the same thread: accepted
  console.log(answer.content);
}
// #endregion docs

await closeStubs();
