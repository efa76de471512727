import { defineConfig } from "tsup";

export default defineConfig({
  // cli: the `langgraph-tool-repair` bin (package.json "bin" -> dist/cli.js; its hashbang line is kept).
  entry: {
    index: "src/index.ts",
    langgraph: "src/langgraph.ts",
    langchain: "src/langchain.ts",
    threads: "src/threads.ts",
    cli: "src/cli/index.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  // Shared chunks in BOTH formats (tsup splits only ESM by default): each class exists once per format, so
  // `instanceof` holds across `langgraph-tool-repair`, `/langgraph` and `/langchain` in CommonJS too.
  splitting: true,
  // Peer dependencies stay external: two copies of @langchain/core break message identity.
  external: [/^@langchain\//, /^langchain/, /^zod/],
});
