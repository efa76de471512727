import { defineConfig } from "vitest/config";

/**
 * Third-party warnings that say nothing about this package, kept out of the test output:
 * - LangChain core's `AIMessage` constructor warns (console.warn, no setting to turn it off) whenever a message
 *   carries raw `additional_kwargs.tool_calls` without `tool_calls`: the tests build such messages on purpose.
 * - The AWS SDK's Node version notice is turned off with the variable the SDK reads (see `env` below).
 */
const THIRD_PARTY_NOISE = ["New LangChain packages are available that more efficiently handle"];

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: "true" },
    onConsoleLog: (log) => (THIRD_PARTY_NOISE.some((text) => log.includes(text)) ? false : undefined),
  },
});
