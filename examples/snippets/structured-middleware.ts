import { HumanMessage } from "@langchain/core/messages";
import { bedrockChat, check, closeStubs, getWeather, Weather, WEATHER_JSON } from "./_support";

const model = await bedrockChat([{ text: WEATHER_JSON }]);
const tools = [getWeather];

// #region docs
import { createAgent } from "langchain";
import { promptedStructuredOutputMiddleware } from "langgraph-tool-repair/langchain";

const agent = createAgent({
  model, // a ChatBedrockConverse
  tools,
  responseFormat: Weather, // keep it: it gives structuredResponse its type
  middleware: [promptedStructuredOutputMiddleware()],
});
// #endregion docs

try {
  const { structuredResponse } = await agent.invoke({ messages: [new HumanMessage("What is the weather in Paris?")] });
  const city: string = structuredResponse.city;
  check(city === "Paris" && structuredResponse.tempC === 21, "structuredResponse is the validated answer");
} finally {
  await closeStubs();
}
