/**
 * The real Agent Server for tests: `langgraph dev` of @langchain/langgraph-cli, in memory, offline, on 127.0.0.1,
 * deploying the graphs of ./platform (which do not use langgraph-tool-repair). The config is copied to a directory
 * of its own (the server writes `.langgraph_api` and a `.gitignore` next to it) with `node_modules` linked back.
 * The server runs in its own process group, killed whole on `close()`. When it cannot start, `agentServerOrSkip`
 * skips with a one-line reason (or fails under LGTR_REQUIRE_SERVICES=1).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { servicesRequired } from "../../support/services";

const HERE = fileURLToPath(new URL(".", import.meta.url));
const ROOT = resolve(HERE, "../../..");
const CLI = join(ROOT, "node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs");

export interface AgentServer {
  url: string;
  /** What the server printed (for a failing test's message). */
  output(): string;
  close(): Promise<void>;
}

/** A free port on 127.0.0.1 (bound then released). */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return Promise.resolve();
  }
  const force = setTimeout(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {}
  }, 5_000);
  return exited.finally(() => clearTimeout(force));
}

/** Starts `langgraph dev` with `env` (e.g. the stub's URL for the graphs) and waits for `/ok` (default 90 s). */
export async function startAgentServer(env: Record<string, string>, timeoutMs = 90_000): Promise<AgentServer> {
  const dir = mkdtempSync(join(tmpdir(), "lgtr-agent-server-"));
  cpSync(join(HERE, "platform"), dir, { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [CLI, "dev", "--host", "127.0.0.1", "--port", String(port), "--no-browser", "--no-reload"];
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    LANGGRAPH_CLI_NO_ANALYTICS: "1",
    LANGSMITH_TRACING: "false",
    ...env,
  };
  for (const key of ["LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGGRAPH_API_KEY", "LANGCHAIN_TRACING_V2"])
    delete childEnv[key];
  const child = spawn(process.execPath, [...args, "--config", join(dir, "langgraph.json")], {
    cwd: dir,
    env: childEnv,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const close = async () => {
    await killGroup(child);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    // The deployment's own key check (platform/auth.ts) guards /ok too.
    const ok = await fetch(`${url}/ok`, { headers: { "x-api-key": env.LGTR_API_KEY ?? "" } }).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) return { url, output: () => output, close };
    await new Promise((done) => setTimeout(done, 250));
  }
  await close();
  const last = output.trim().split("\n").at(-1) ?? "";
  throw new Error(
    `langgraph dev did not answer /ok on ${url}${child.exitCode !== null ? ` (exited ${child.exitCode})` : ""}: ${last}`,
  );
}

/** For a `describe`'s beforeAll: the server, or the one-line reason it could not start (thrown under LGTR_REQUIRE_SERVICES=1). */
export async function agentServerOrReason(env: Record<string, string>): Promise<AgentServer | string> {
  try {
    return await startAgentServer(env);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (servicesRequired()) throw new Error(`LGTR_REQUIRE_SERVICES=1 but ${reason}`);
    return reason.split("\n")[0];
  }
}
