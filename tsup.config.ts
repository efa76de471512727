import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts", "src/langgraph.ts", "src/langchain.ts"],
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  // Peer dependencies stay external: two copies of @langchain/core break message identity.
  external: [/^@langchain\//, /^langchain/, /^zod/],
});
