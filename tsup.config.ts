import { defineConfig } from "tsup";

export default defineConfig({
  // cli: the `langgraph-tool-repair` bin (package.json "bin" -> dist/cli.js; its hashbang line is kept).
  entry: ["src/index.ts", "src/langgraph.ts", "src/langchain.ts", "src/threads.ts", "src/cli.ts"],
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  // Peer dependencies stay external: two copies of @langchain/core break message identity.
  external: [/^@langchain\//, /^langchain/, /^zod/],
});
