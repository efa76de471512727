// ESM consumer: every entry point through `import`. A consumer set up without langchain (CONSUMER_WITHOUT_LANGCHAIN=1,
// see ../consumers.json) checks the root and /langgraph entries only.
import * as root from "langgraph-tool-repair";
import * as langgraph from "langgraph-tool-repair/langgraph";
import * as threads from "langgraph-tool-repair/threads";
import * as messages from "@langchain/core/messages";
import * as chatModels from "@langchain/core/language_models/chat_models";
import * as graph from "@langchain/langgraph";
import { z } from "zod";
import checks from "./checks.cjs";

const withLangchain = process.env.CONSUMER_WITHOUT_LANGCHAIN !== "1";
const langchain = withLangchain ? await import("langgraph-tool-repair/langchain") : undefined;
const langchainPkg = withLangchain ? await import("langchain") : undefined;

const done = await checks.runChecks({
  root,
  langgraph,
  threads,
  langchain,
  messages,
  chatModels,
  graph,
  langchainPkg,
  zod: z,
});
console.log(`esm: ${done.join(", ")}`);
