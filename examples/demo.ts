/**
 * `npm run demo`: a thread broken the way real ones break, sent through the REAL LangChain clients
 * (ChatBedrockConverse with the AWS SDK, ChatOpenAI, ChatAnthropic) to local stub servers that enforce the
 * providers' rules (test/support/stubs; no network beyond 127.0.0.1). Each provider rejects it with its own
 * error text; `repairToolCalls` fixes it; the same clients then accept it. The stubs' model answers from the
 * request it received (the tool results it was sent and the user's last message, examples/sent.ts), and each
 * accepted request is printed as it was sent.
 *
 * The incident: a travel agent called two tools in parallel; the user cancelled the stream while the hotel
 * search was still running (the flight search had finished), then typed a new message into the same
 * thread. LangGraph appended the new message after the assistant message whose hotel call was never
 * answered, and every request of that thread failed from then on. Part 7 replays it inside a real agent
 * (examples/agent-demo.ts).
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { findToolCallProblems, repairToolCalls } from "../src/index";
import {
  anthropicModel,
  bedrockModel,
  openAIModel,
  startAnthropicStub,
  startBedrockStub,
  startOpenAIStub,
  type RunningStub,
} from "../test/support/stubs";
import { agentDemo, DEMO_THREADS_DB } from "./agent-demo";
import { printWrapped } from "./print";
import { answerFromRequest, describeSent } from "./sent";

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
const red = (s: string) => (process.stdout.isTTY ? `\x1b[31m${s}\x1b[0m` : s);
const green = (s: string) => (process.stdout.isTTY ? `\x1b[32m${s}\x1b[0m` : s);

function incident(): BaseMessage[] {
  return [
    new SystemMessage({ content: "You are a travel agent. Use the tools.", id: "sys" }),
    new HumanMessage({ content: "Find me a flight to Lisbon on May 3 and a hotel near Alfama.", id: "u1" }),
    new AIMessage({
      id: "a1",
      content: "I'll look up flights and hotels at the same time.",
      tool_calls: [
        { id: "tooluse_flights01", name: "search_flights", args: { to: "LIS", date: "2026-05-03" }, type: "tool_call" },
        { id: "tooluse_hotels02", name: "search_hotels", args: { near: "Alfama" }, type: "tool_call" },
      ],
    }),
    // The flight search finished; the hotel search was cancelled with the stream.
    new ToolMessage({
      id: "t1",
      tool_call_id: "tooluse_flights01",
      name: "search_flights",
      content: "TP1351 08:05, 142 EUR",
    }),
    // The user's next message went into the same thread as new input, not as a resume.
    new HumanMessage({ content: "Sorry, I cancelled that. Just the flight for now, please.", id: "u2" }),
  ];
}

function show(messages: BaseMessage[]): void {
  for (const [i, m] of messages.entries()) {
    const calls =
      AIMessage.isInstance(m) && m.tool_calls?.length ? ` calls=[${m.tool_calls.map((c) => c.id).join(", ")}]` : "";
    const answers = ToolMessage.isInstance(m) ? ` answers=${m.tool_call_id}` : "";
    const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
    printWrapped(`  ${String(i).padStart(2)} ${m.getType().padEnd(6)}${calls}${answers}  `, text, 12);
  }
}

async function attempt(label: string, stub: RunningStub, call: () => Promise<BaseMessage>): Promise<boolean> {
  try {
    const reply = await call();
    printWrapped(`  ${label.padEnd(20)} ${green("accepted")}: `, String(reply.content));
    console.log("    the request as sent:");
    for (const line of describeSent(stub.requests.at(-1))) printWrapped("      ", line, 19);
    return true;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    printWrapped(`  ${label.padEnd(20)} ${red("400")}: `, message);
    return false;
  }
}

async function sendEverywhere(
  history: BaseMessage[],
  stubs: { bedrock: RunningStub; openai: RunningStub; anthropic: RunningStub },
) {
  // A real agent has its tools bound (ChatBedrockConverse only sends toolConfig then: Bedrock B3).
  const tools = ["search_flights", "search_hotels"].map((name) => ({
    type: "function" as const,
    function: { name, description: name, parameters: { type: "object", properties: {} } },
  }));
  return [
    await attempt("Bedrock Converse", stubs.bedrock, () =>
      bedrockModel(stubs.bedrock).bindTools(tools).invoke(history),
    ),
    await attempt("OpenAI Chat", stubs.openai, () => openAIModel(stubs.openai).bindTools(tools).invoke(history)),
    await attempt("Anthropic Messages", stubs.anthropic, () =>
      anthropicModel(stubs.anthropic).bindTools(tools).invoke(history),
    ),
  ];
}

async function main(): Promise<void> {
  // The model answers from what it was sent: no answer is scripted.
  const answer = (request: unknown) => ({ text: answerFromRequest(request) });
  const stubs = {
    bedrock: await startBedrockStub({ script: answer }),
    openai: await startOpenAIStub({ script: answer }),
    anthropic: await startAnthropicStub({ script: answer }),
  };
  try {
    const history = incident();
    console.log(bold("\n1. The thread after the cancelled stream and the new message"));
    show(history);

    console.log(bold("\n2. findToolCallProblems(history): what is wrong, and which provider rules it breaks"));
    for (const p of findToolCallProblems(history))
      printWrapped(
        "  ",
        `[${p.kind}] message ${p.index}${p.toolCallId ? ` ${p.toolCallId}` : ""}: ${p.detail} (rules ${p.rules.join(", ")})`,
        4,
      );

    console.log(bold("\n3. The real clients send it to the local provider stubs"));
    const before = await sendEverywhere(history, stubs);

    console.log(bold("\n4. repairToolCalls(history): every repair is data"));
    const { messages, repairs } = repairToolCalls(history);
    for (const r of repairs)
      printWrapped(
        "  ",
        `${r.action} (${r.problem}) at input message ${r.index}${r.toolCallId ? ` ${r.toolCallId}` : ""}: ${r.detail}`,
        4,
      );
    show(messages);

    console.log(bold("\n5. The same clients, the repaired thread"));
    const after = await sendEverywhere(messages, stubs);

    const clean = findToolCallProblems(messages).length === 0;
    const again = repairToolCalls(messages);
    console.log(bold("\n6. Checks"));
    console.log(
      `  problems left: ${clean ? green("none") : red("some")}; repairing again: ` +
        `${again.messages === messages && again.repairs.length === 0 ? green("same array, no repairs") : red("changed")}`,
    );

    console.log(bold("\n7. The same incident inside an agent: createAgent, ChatBedrockConverse, threads in SQLite"));
    const agent = await agentDemo();

    const ok = before.every((x) => !x) && after.every(Boolean) && clean && agent;
    console.log(
      ok
        ? green("\nDemo passed: rejected before, accepted after, by all three providers and inside the agent.\n")
        : red("\nDemo FAILED.\n"),
    );
    console.log(
      `The thread left broken without this package is kept in ${DEMO_THREADS_DB}. Scan and repair it offline:`,
    );
    console.log(
      `  npm run cli -- scan --sqlite ${DEMO_THREADS_DB}   (with the package installed: npx langgraph-tool-repair ` +
        `scan --sqlite ${DEMO_THREADS_DB})`,
    );
    console.log("See docs/cli.md.\n");
    process.exitCode = ok ? 0 : 1;
  } finally {
    await Promise.all(Object.values(stubs).map((s) => s.close()));
  }
}

await main();
