/**
 * The package as users run it: the built entry points (`npm run bench` builds first). Benchmarks import from
 * here, never from src/, so no transpiler's helpers are in what they time.
 */
export * from "../dist/index.js";
export * from "../dist/langgraph.js";
export * from "../dist/langchain.js";
