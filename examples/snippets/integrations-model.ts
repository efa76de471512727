import { bedrockChat, brokenThread, check, closeStubs, searchFlights, searchHotels } from "./_support";

const llm = await bedrockChat([{ text: "Flight TP1351 at 08:05." }]);
const tools = [searchFlights, searchHotels];
const messages = brokenThread();

// #region docs
import { withRequestRepair } from "langgraph-tool-repair";

const model = withRequestRepair(llm).bindTools(tools); // bindTools, stream, withStructuredOutput work as before
const answer = await model.invoke(messages); // the broken thread is repaired for Bedrock in the request only
// #endregion docs

try {
  check(answer.text === "Flight TP1351 at 08:05.", "the Bedrock stub accepted the repaired request");
  check(messages.length === 5, "the caller's messages are untouched");
} finally {
  await closeStubs();
}
