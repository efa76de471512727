import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const model = (await bedrockChat()).bindTools([searchFlights, searchHotels]);
const messages = brokenThread(); // system, user, calls (flights, hotels), the flight result, user

// #region docs
import { parseToolPairingError, type ProviderRejection } from "langgraph-tool-repair";

let rejection: ProviderRejection | undefined;
try {
  await model.invoke(messages);
} catch (error) {
  rejection = parseToolPairingError(error, { messages, provider: "bedrock" });
  // { provider: "bedrock", kind: "missing_results", rule: "B1", toolCallIds: ["tooluse_hotels02"],
  //   payloadIndex: 2, messageIndex: 3, text: "Expected toolResult blocks at messages.2.content for ..." }
}
// #endregion docs

try {
  check(rejection !== undefined, "the Bedrock stub rejected the broken thread");
  const { provider, kind, rule, toolCallIds, payloadIndex, messageIndex, text } = rejection;
  check(
    JSON.stringify({ provider, kind, rule, toolCallIds, payloadIndex, messageIndex }) ===
      JSON.stringify({
        provider: "bedrock",
        kind: "missing_results",
        rule: "B1",
        toolCallIds: ["tooluse_hotels02"],
        payloadIndex: 2,
        messageIndex: 3,
      }),
    "the rejection is what the comment shows",
  );
  check(text.startsWith("Expected toolResult blocks at messages.2.content for "), "the provider's text");
} finally {
  await closeStubs();
}
