/** The bin before the command loads: help without any peer, and a missing peer named with its install line. */
import { describe, expect, it } from "vitest";
import { version } from "../../package.json";
import { HELP } from "../../src/cli/args";
import { missingPackage, startCli } from "../../src/cli/start";

function capture() {
  const out = { stdout: "", stderr: "" };
  const io = {
    stdout: { write: (text: string) => ((out.stdout += text), true) },
    stderr: { write: (text: string) => ((out.stderr += text), true) },
  };
  return { out, io };
}

/** What Node throws for an ESM import of a package that is not installed. */
const notFound = (name: string) =>
  Object.assign(new Error(`Cannot find package '${name}' imported from /app/node_modules/x/dist/main.js`), {
    code: "ERR_MODULE_NOT_FOUND",
  });

describe("startCli", () => {
  it("answers --help and --version without loading the command (nothing but this package installed)", async () => {
    const { out, io } = capture();
    let loaded = false;
    const load = async () => {
      loaded = true;
      throw notFound("@langchain/core");
    };
    expect(await startCli(["--help"], io, load)).toBe(0);
    expect(await startCli(["scan", "-h"], io, load)).toBe(0);
    expect(out.stdout).toBe(HELP + HELP);
    expect(await startCli(["scan", "--version"], io, load)).toBe(0);
    expect(out.stdout).toBe(`${HELP + HELP}${version}\n`);
    expect(loaded).toBe(false);
  });

  it("with no arguments prints the help, exit 2 (no command given), without loading the command", async () => {
    const { out, io } = capture();
    expect(await startCli([], io, async () => Promise.reject(notFound("@langchain/core")))).toBe(2);
    expect(out).toEqual({ stdout: HELP, stderr: "" });
    expect(HELP).toContain("langgraph-tool-repair revert <store> --manifest FILE");
    expect(HELP).toMatch(/clean, fine with the middleware .*, or broken/s);
  });

  it("names a missing peer and the install line, exit 2", async () => {
    const { out, io } = capture();
    const code = await startCli(["scan", "--sqlite", "x.db"], io, async () => {
      throw notFound("@langchain/langgraph-checkpoint");
    });
    expect(code).toBe(2);
    expect(out.stderr).toContain("cannot load @langchain/langgraph-checkpoint");
    expect(out.stderr).toContain("npm install @langchain/core @langchain/langgraph-checkpoint");
  });

  it("passes other load failures on, and runs the command when it loads", async () => {
    const { io } = capture();
    await expect(startCli(["scan"], io, async () => Promise.reject(new SyntaxError("bad")))).rejects.toThrow("bad");
    const calls: string[][] = [];
    const main = { runCli: async (argv: string[]) => (calls.push(argv), 7) };
    expect(await startCli(["scan", "--sqlite", "x.db"], io, async () => main as never)).toBe(7);
    expect(calls).toEqual([["scan", "--sqlite", "x.db"]]);
  });
});

describe("missingPackage", () => {
  it("reads the package from ESM and CommonJS errors, and nothing else", () => {
    expect(missingPackage(notFound("@langchain/core"))).toBe("@langchain/core");
    const cjs = Object.assign(new Error("Cannot find module 'pg'\nRequire stack:\n- /x.js"), {
      code: "MODULE_NOT_FOUND",
    });
    expect(missingPackage(cjs)).toBe("pg");
    expect(missingPackage(new Error("Cannot find package 'x'"))).toBeUndefined();
    expect(missingPackage(undefined)).toBeUndefined();
  });
});
