/** `npm run bench`: every benchmark of the package, printed as Markdown tables. */
import { runEngineBench } from "./engine";
import { runCheckpointerBench } from "./checkpointer";
import { runStructuredBench } from "./structured";
import { runRecoveryBench } from "./recovery";
import { runSummarizeBench } from "./summarize";
import { runPostgresCheckpointerBench } from "./checkpointer-postgres";
import { runThreadsBench } from "./threads";
import { runApiBench } from "./api";

const sections: (() => string[] | Promise<string[]>)[] = [
  runEngineBench,
  runCheckpointerBench,
  runPostgresCheckpointerBench,
  runStructuredBench,
  runRecoveryBench,
  runSummarizeBench,
  runThreadsBench,
  runApiBench,
];

// `npm run bench -- checkpointer postgres`: only the sections whose function name holds one of the words.
const only = process.argv.slice(2).map((word) => word.toLowerCase());
const chosen = sections.filter(
  (section) => only.length === 0 || only.some((word) => section.name.toLowerCase().includes(word)),
);

console.log(`# langgraph-tool-repair benchmarks (node ${process.version}, ${new Date().toISOString().slice(0, 10)})\n`);
for (const section of chosen) {
  console.log((await section()).join("\n"));
  console.log("");
}
