/**
 * What peers do about the same histories, timed next to the engine:
 * - deepagents' patch middleware (`createPatchToolCallsMiddleware`): its pure part, `patchDanglingToolCalls`, which the
 *   package does not export; its source is read out of the installed bundle and compiled with the same message
 *   classes, so nothing of the middleware's async plumbing is timed.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";

type Patch = (messages: BaseMessage[]) => { patchedMessages: BaseMessage[]; needsPatch: boolean };

/** deepagents' `patchDanglingToolCalls` (its version: `version`), as the installed bundle defines it. */
export function deepagentsPatch(): { patch: Patch; version: string } {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("deepagents/package.json");
  const dist = join(dirname(pkg), "dist");
  const index = readFileSync(join(dist, "index.js"), "utf8");
  // The entry re-exports from one bundle chunk, which holds the middleware.
  for (const [, chunk] of index.matchAll(/from "\.\/([^"]+\.js)"/g)) {
    const source = readFileSync(join(dist, chunk), "utf8");
    const body = /^function patchDanglingToolCalls\(messages\) \{\n[\s\S]*?\n\}$/m.exec(source)?.[0];
    if (body) {
      const patch = new Function("AIMessage", "ToolMessage", `${body}\nreturn patchDanglingToolCalls;`)(
        AIMessage,
        ToolMessage,
      );
      return { patch, version: (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version };
    }
  }
  throw new Error("deepagents' patchDanglingToolCalls was not found in its bundle: the bench needs updating");
}
