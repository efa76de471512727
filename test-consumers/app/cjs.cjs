// CommonJS consumer: every entry point through `require`. A consumer set up without langchain
// (CONSUMER_WITHOUT_LANGCHAIN=1, see ../consumers.json) checks the root and /langgraph entries only.
const { runChecks } = require("./checks.cjs");

const withLangchain = process.env.CONSUMER_WITHOUT_LANGCHAIN !== "1";
runChecks({
  root: require("langgraph-tool-repair"),
  langgraph: require("langgraph-tool-repair/langgraph"),
  threads: require("langgraph-tool-repair/threads"),
  langchain: withLangchain ? require("langgraph-tool-repair/langchain") : undefined,
  messages: require("@langchain/core/messages"),
  chatModels: require("@langchain/core/language_models/chat_models"),
  graph: require("@langchain/langgraph"),
  langchainPkg: withLangchain ? require("langchain") : undefined,
  zod: require("zod").z,
}).then(
  (done) => console.log(`cjs: ${done.join(", ")}`),
  (error) => {
    console.error(error);
    process.exitCode = 1;
  },
);
