import { payloadFor, validatePayloadFor } from "./payloads";
import { AIMessage, HumanMessage, ToolMessage, SystemMessage } from "@langchain/core/messages";
const call = (id: string, name = "get_weather") => ({ id, name, args: { city: "x" } });
const cases: Record<string, any[]> = {
  valid: [new SystemMessage("sys"), new HumanMessage("hi"), new AIMessage({ content: "", tool_calls: [call("call_a"), call("call_b")] }), new ToolMessage({ content: "r", tool_call_id: "call_a" }), new ToolMessage({ content: "r", tool_call_id: "call_b" }), new AIMessage("done"), new HumanMessage("next")],
  humanAfterTool: [new HumanMessage("hi"), new AIMessage({ content: "", tool_calls: [call("call_a")] }), new ToolMessage({ content: "r", tool_call_id: "call_a" }), new HumanMessage("next")],
  emptyAI: [new HumanMessage("hi"), new AIMessage(""), new HumanMessage("next")],
  emptyHuman: [new HumanMessage("")],
  emptyTool: [new HumanMessage("hi"), new AIMessage({ content: "", tool_calls: [call("call_a")] }), new ToolMessage({ content: "", tool_call_id: "call_a" })],
  errorTool: [new HumanMessage("hi"), new AIMessage({ content: "", tool_calls: [call("call_a")] }), new ToolMessage({ content: "boom", tool_call_id: "call_a", status: "error" })],
  invalidOnly: [new HumanMessage("hi"), new AIMessage({ content: "", tool_calls: [], invalid_tool_calls: [{ id: "call_a", name: "get_weather", args: "{bad", error: "x", type: "invalid_tool_call" }] }), new ToolMessage({ content: "r", tool_call_id: "call_a" })],
  invalidRaw: [new HumanMessage("hi"), new AIMessage({ content: "", additional_kwargs: { tool_calls: [{ id: "call_a", type: "function", function: { name: "get_weather", arguments: "{bad" } }] }, invalid_tool_calls: [{ id: "call_a", name: "get_weather", args: "{bad", error: "x", type: "invalid_tool_call" }] }), new ToolMessage({ content: "r", tool_call_id: "call_a" })],
  toolUseContentNoCalls: [new HumanMessage("hi"), new AIMessage({ content: [{ type: "text", text: "t" }, { type: "tool_use", id: "toolu_a", name: "get_weather", input: {} }], tool_calls: [] }), new HumanMessage("next")],
  responsesOutput: [new HumanMessage("hi"), new AIMessage({ content: "", tool_calls: [], response_metadata: { output: [{ type: "function_call", id: "fc_1", call_id: "call_a", name: "get_weather", arguments: "{}" }] } }), new HumanMessage("next")],
  systemMiddle: [new HumanMessage("hi"), new AIMessage("x"), new SystemMessage("note"), new HumanMessage("y")],
  humanBetween: [new HumanMessage("hi"), new AIMessage({ content: "", tool_calls: [call("call_a")] }), new HumanMessage("wait"), new ToolMessage({ content: "r", tool_call_id: "call_a" })],
  whitespaceAI: [new HumanMessage("hi"), new AIMessage("  "), new HumanMessage("next")],
  aiTextArrayEmpty: [new HumanMessage("hi"), new AIMessage({ content: [{ type: "text", text: "" }] }), new HumanMessage("next")],
};
for (const [name, msgs] of Object.entries(cases)) {
  const v = await validatePayloadFor("strict", msgs);
  console.log("==", name, JSON.stringify(v.map(x => [x.provider, x.rule, x.message.slice(0, 90)]), null, 0));
}
console.log(JSON.stringify(await payloadFor("bedrock", cases.emptyTool)));
console.log(JSON.stringify(await payloadFor("openai-responses", cases.responsesOutput)));
console.log(JSON.stringify(await payloadFor("anthropic", cases.systemMiddle)));
console.log(JSON.stringify(await payloadFor("bedrock", cases.aiTextArrayEmpty)));
