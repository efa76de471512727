/** `npm run bench`: every benchmark of the package, printed as Markdown tables. */
import { runEngineBench } from "./engine";
import { runCheckpointerBench } from "./checkpointer";
import { runStructuredBench } from "./structured";
import { runRecoveryBench } from "./recovery";
import { runSummarizeBench } from "./summarize";
import { runPostgresCheckpointerBench } from "./checkpointer-postgres";
import { runThreadsBench } from "./threads";

const sections: (() => string[] | Promise<string[]>)[] = [
  runEngineBench,
  runCheckpointerBench,
  runPostgresCheckpointerBench,
  runStructuredBench,
  runRecoveryBench,
  runSummarizeBench,
  runThreadsBench,
];

console.log(`# langgraph-tool-repair benchmarks (node ${process.version}, ${new Date().toISOString().slice(0, 10)})\n`);
for (const section of sections) {
  console.log((await section()).join("\n"));
  console.log("");
}
