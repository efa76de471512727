import { HumanMessage } from "@langchain/core/messages";
import type { z } from "zod";
import { bedrockChat, check, closeStubs, getWeather, Weather, WEATHER_JSON } from "./_support";
import type { Same } from "./_types";

// The loop's final answer, then the constrained (native) call after it.
const llm = await bedrockChat([{ text: "It is sunny in Paris, 21C." }, { text: WEATHER_JSON }]);
const tools = [getWeather];
const prompt = "You are a weather assistant.";
const messages = [new HumanMessage("What is the weather in Paris?")];

// #region docs
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { withPromptedStructuredOutput } from "langgraph-tool-repair/langgraph";

const agent = createReactAgent(withPromptedStructuredOutput({ llm, tools, prompt, responseFormat: Weather }));
const { structuredResponse } = await agent.invoke({ messages }); // typed as z.infer<typeof Weather>
// #endregion docs

export const typed: Same<typeof structuredResponse, z.infer<typeof Weather>> = true;
try {
  check(JSON.stringify(structuredResponse) === WEATHER_JSON, "structuredResponse is the validated answer");
} finally {
  await closeStubs();
}
