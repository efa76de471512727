import { describe, expect, it } from "vitest";
import { parseCliArgs, parseSaverSpec, parseSince, UsageError, type CliArgs } from "../../src/cli/args";
import { runCli } from "../../src/cli/main";

const NOW = new Date("2026-05-10T12:00:00Z");
const parse = (...argv: string[]) => parseCliArgs(argv, { DB_URL: "postgresql://app:pw@db:5432/app" }, NOW) as CliArgs;
const usage =
  (...argv: string[]) =>
  () =>
    parseCliArgs(argv, {}, NOW);

describe("parseCliArgs", () => {
  it("reads a scan of a SQLite file with the defaults (no provider: each thread's own)", () => {
    const args = parse("scan", "--sqlite", "threads.db");
    expect(args.provider).toBeUndefined();
    expect(args).toMatchObject({
      command: "scan",
      store: { kind: "sqlite", file: "threads.db" },
      messagesKey: "messages",
      json: false,
      apply: false,
      concurrency: 4,
    });
  });

  it("reads every option of repair", () => {
    const args = parse(
      "repair",
      "--saver",
      "@acme/saver:createSaver",
      "--saver-options",
      '{"url":"redis://x"}',
      "--thread",
      "a",
      "--thread",
      "b",
      "--provider",
      "bedrock",
      "--json",
      "--apply",
      "--since",
      "7d",
      "--limit",
      "50",
      "--concurrency",
      "8",
      "--messages-key",
      "history",
    );
    expect(args).toMatchObject({
      command: "repair",
      store: { kind: "saver", module: "@acme/saver", exportName: "createSaver" },
      saverOptions: { url: "redis://x" },
      threads: ["a", "b"],
      provider: "bedrock",
      json: true,
      apply: true,
      since: new Date("2026-05-03T12:00:00Z"),
      limit: 50,
      concurrency: 8,
      messagesKey: "history",
    });
  });

  it("reads the PostgreSQL URL from the environment with env:NAME", () => {
    const args = parse("scan", "--postgres", "env:DB_URL");
    expect(args.store).toEqual({ kind: "postgres", url: "postgresql://app:pw@db:5432/app" });
  });

  it.each([
    [[], /no command/],
    [["fix", "--sqlite", "a.db"], /unknown command "fix"/],
    [["scan"], /give one store: --sqlite FILE, --postgres URL or --saver MODULE/],
    [["scan", "--sqlite", "a.db", "--postgres", "postgres://h/db"], /give one store: --sqlite FILE/],
    [["scan", "--sqlite", "a.db", "--apply"], /^--apply goes with repair --apply$/],
    [["scan", "--sqlite", "a.db", "extra"], /unexpected argument after the command/],
    [["scan", "--sqlite", "a.db", "--provider", "gpt"], /--provider: "gpt" is not one of/],
    [["scan", "--sqlite", "a.db", "--limit", "0"], /--limit: expected a whole number from 1/],
    [["scan", "--sqlite", "a.db", "--concurrency", "100"], /--concurrency: expected a whole number from 1 to 64/],
    [["scan", "--sqlite", "a.db", "--since", "yesterday"], /--since: "yesterday" is neither/],
    [["scan", "--sqlite", "a.db", "--saver-options", "{}"], /--saver-options applies to --saver and --postgres/],
    [["scan", "--saver", "./s.js", "--saver-options", "[1]"], /expected a JSON object/],
    [["scan", "--saver", "./s.js", "--saver-options", "{nope"], /expected a JSON object/],
    [["scan", "--postgres", "env:MISSING"], /environment variable MISSING is not set/],
    [["scan", "--postgres", "mysql://h/db"], /expected a postgres:\/\/ or postgresql:\/\/ URL/],
    [["scan", "--sqlite", "a.db", "--bogus"], /^unknown option --bogus$/],
    [["scan", "--sqlite", "a.db", "--shard", "0/4"], /--shard: expected I\/N with 1 <= I <= N/],
    [["scan", "--sqlite", "a.db", "--shard", "5/4"], /--shard: expected I\/N/],
    [["scan", "--sqlite", "a.db", "--shard", "2"], /--shard: expected I\/N/],
    [["scan", "--sqlite", "a.db", "--yes"], /^--yes goes with repair --apply or revert$/],
    [["scan", "--sqlite", "a.db", "--manifest", "m"], /^--manifest goes with repair --apply or revert$/],
    [["repair", "--sqlite", "a.db", "--yes"], /^--yes goes with repair --apply or revert$/],
    [["repair", "--sqlite", "a.db", "--manifest", "m"], /^--manifest goes with repair --apply or revert$/],
    [["revert", "--sqlite", "a.db"], /^revert needs --manifest FILE/],
    [["revert", "--sqlite", "a.db", "--manifest", "m", "--apply"], /^--apply goes with repair --apply$/],
  ])("%j is a usage error", (argv, message) => {
    expect(usage(...(argv as string[]))).toThrow(UsageError);
    expect(usage(...(argv as string[]))).toThrow(message);
  });

  it("a misspelled flag names the nearest known one, only when it is close; exit code 2 as every usage error", async () => {
    const message = (...argv: string[]) => {
      try {
        parseCliArgs(argv);
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(message("repair", "--sqlite", "a.db", "--aply")).toBe("unknown option --aply (did you mean --apply?)");
    expect(message("scan", "--sqlite", "a.db", "--thred", "t")).toBe("unknown option --thred (did you mean --thread?)");
    expect(message("scan", "--sqlite", "a.db", "--messages_key=m")).toBe(
      "unknown option --messages_key (did you mean --messages-key?)",
    );
    expect(message("scan", "--sqlite", "a.db", "--xyz")).toBe("unknown option --xyz");
    expect(message("scan", "--sqlite", "a.db", "-x")).toBe("unknown option -x");

    let stderr = "";
    const code = await runCli(["repair", "--sqlite", "a.db", "--aply"], {
      stdout: { write: () => true },
      stderr: { write: (t: string) => (stderr += t) },
      env: {},
    });
    expect(code).toBe(2);
    expect(stderr.split("\n")[0]).toBe("langgraph-tool-repair: unknown option --aply (did you mean --apply?)");
  });

  it("a misspelled command or --provider value names the nearest one", () => {
    expect(usage("scann", "--sqlite", "a.db")).toThrow(
      /^unknown command "scann" \(did you mean scan\?\): use scan, repair or revert$/,
    );
    expect(usage("repiar", "--sqlite", "a.db")).toThrow(/^unknown command "repiar" \(did you mean repair\?\)/);
    expect(usage("revet", "--sqlite", "a.db")).toThrow(/^unknown command "revet" \(did you mean revert\?\)/);
    expect(usage("fix", "--sqlite", "a.db")).toThrow(/^unknown command "fix": use scan, repair or revert$/);
    expect(usage("scan", "--sqlite", "a.db", "--provider", "bedrok")).toThrow(
      /^--provider: "bedrok" is not one of openai, .*, strict \(did you mean bedrock\?\)$/,
    );
    expect(usage("scan", "--sqlite", "a.db", "--provider", "antropic")).toThrow(/\(did you mean anthropic\?\)$/);
    expect(usage("scan", "--sqlite", "a.db", "--provider", "gpt")).toThrow(/strict$/);
  });

  it("reads --verbose", () => {
    expect(parse("scan", "--sqlite", "a.db", "--verbose").verbose).toBe(true);
    expect(parse("scan", "--sqlite", "a.db").verbose).toBe(false);
  });

  it("reads revert and the flags of a write", () => {
    expect(parse("revert", "--sqlite", "a.db", "--manifest", "m.jsonl", "--yes", "--json")).toMatchObject({
      command: "revert",
      manifest: "m.jsonl",
      yes: true,
      json: true,
    });
    expect(
      parse("repair", "--sqlite", "a.db", "--apply", "--yes", "--manifest", "m.jsonl", "--progress", "--verbose"),
    ).toMatchObject({
      apply: true,
      yes: true,
      manifest: "m.jsonl",
      progress: true,
      verbose: true,
    });
  });

  it("--shard I/N: shard I of N", () => {
    const args = parse("scan", "--sqlite", "a.db", "--shard", "2/4");
    expect(args.shard).toEqual({ index: 2, count: 4 });
    expect(parse("scan", "--sqlite", "a.db").shard).toBeUndefined();
  });
});

describe("parseSince and parseSaverSpec", () => {
  it("takes ISO dates and durations back from now", () => {
    expect(parseSince("2026-05-01", NOW)).toEqual(new Date("2026-05-01T00:00:00Z"));
    expect(parseSince("2026-05-01T08:30:00Z", NOW)).toEqual(new Date("2026-05-01T08:30:00Z"));
    expect(parseSince("30m", NOW)).toEqual(new Date("2026-05-10T11:30:00Z"));
    expect(parseSince("2w", NOW)).toEqual(new Date("2026-04-26T12:00:00Z"));
  });

  it("splits MODULE:EXPORT at the last colon only when an identifier follows", () => {
    expect(parseSaverSpec("./saver.mjs:make")).toEqual({ module: "./saver.mjs", exportName: "make" });
    expect(parseSaverSpec("@scope/pkg")).toEqual({ module: "@scope/pkg" });
    expect(parseSaverSpec("C:\\savers\\s.js")).toEqual({ module: "C:\\savers\\s.js" });
    expect(parseSaverSpec("C:\\savers\\s.js:make")).toEqual({ module: "C:\\savers\\s.js", exportName: "make" });
  });
});
