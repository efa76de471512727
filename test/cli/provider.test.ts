/**
 * Whose rules the command judges each thread by, and what it says a repaired thread still needs. One SQLite
 * store holds threads made by real ChatOpenAI and ChatBedrockConverse runs (against the local stubs): without
 * `--provider`, each thread is judged for the provider its answers came from. After `repair --apply`, a Bedrock
 * thread is structurally valid but a plain Bedrock agent is still refused (a user turn right after tool results
 * is two user turns in a row, B6): the report names that and the middleware that does it per request.
 */
import * as checkpointPackage from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, it } from "vitest";
import { nextMessage, seedThreads, startSeedModel, type SeedModel, type SeedProvider } from "../threads/support/seed";
import { openTestStore } from "../threads/support/stores";
import { applyFlags, jsonLines, runCliHere } from "./support/run-cli";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function model(provider: SeedProvider): Promise<SeedModel> {
  const started = await startSeedModel(provider);
  cleanups.push(() => started.stub.close());
  return started;
}

const statusOf = (lines: Record<string, unknown>[]) =>
  Object.fromEntries(lines.map((l) => [l.thread as string, [l.status, l.provider, l.providerFrom]]));

describe("scan and repair without --provider: each thread judged for its own model", () => {
  it("reads the provider from the stored answers; a repaired Bedrock thread is said to still need the middleware", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    const openai = await model("openai");
    const bedrock = await model("bedrock");
    await seedThreads(store.saver, openai, { brokenSend: 1, clean: 1, prefix: "oa-" });
    await seedThreads(store.saver, bedrock, { brokenSend: 1, clean: 1, prefix: "br-" });
    const flags = ["--sqlite", store.file!];

    const scan = await runCliHere(["scan", ...flags, "--json"]);
    // The pre-check passes a clean thread without reviving it: clean for every provider, its metadata unread.
    // Where it is off (checkpoint 1.0.x has no JsonPlusSerializer: the generic path), the thread is read whole.
    const preChecked = "JsonPlusSerializer" in checkpointPackage;
    const clean = (provider: string) => ["clean", ...(preChecked ? ["strict", "default"] : [provider, "thread"])];
    expect(statusOf(jsonLines(scan.stdout))).toEqual({
      "oa-broken-send-1": ["broken", "openai", "thread"],
      "oa-clean-1": clean("openai"),
      "br-broken-send-1": ["broken", "bedrock", "thread"],
      "br-clean-1": clean("bedrock"),
    });

    const applied = await runCliHere(["repair", ...flags, ...applyFlags()]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain("thread br-broken-send-1: repaired");
    expect(applied.stdout).toContain("thread oa-broken-send-1: repaired");
    // In plain words: rule ids only with --verbose (and in --json).
    expect(applied.stdout).toMatch(
      /^ {2}then fine with the middleware: bedrock requests need toolCallRepairMiddleware \/ toolCallRepairHook \(request shaping, .*\)$/m,
    );
    expect(applied.stdout).not.toMatch(/openai requests need|B6|consecutive_same_role/);
    expect(applied.stdout).toMatch(
      /^1 thread is fine with .*Hook, which shapes bedrock requests; a plain agent's are refused \(--verbose names the rules\)$/m,
    );
    expect(applied.stdout).toMatch(/broken when read/);
    expect(applied.stdout).not.toMatch(/Most broken threads|Still broken/);
    // The clean thread is read whole where the pre-check is off (see above): one more judged for its own model.
    expect(applied.stdout).toMatch(
      new RegExp(`^Judged for: .*bedrock \\(read from the thread\\) ${preChecked ? 1 : 2}`, "m"),
    );
    const applyJson = await runCliHere(["repair", ...flags, "--json"]);
    const bedrockLine = jsonLines(applyJson.stdout).find((l) => l.thread === "br-broken-send-1");
    expect(bedrockLine).toMatchObject({
      status: "unchanged",
      found: "reshape",
      provider: "bedrock",
      reshape: [{ kind: "consecutive_same_role", rules: ["B6"] }],
    });

    // The OpenAI thread is clean for OpenAI; the Bedrock one needs shaping, and says so again.
    const rescan = await runCliHere(["scan", ...flags]);
    expect(rescan.code).toBe(0);
    expect(rescan.stdout).toMatch(/\b0 {2}broken/);
    expect(rescan.stdout).toMatch(
      /^ {2}1 {2}fine with the middleware \(nothing to repair; its shaping of each request is needed\)$/m,
    );
    expect(rescan.stdout).not.toMatch(/B6|consecutive_same_role/);
    const verbose = await runCliHere(["scan", ...flags, "--verbose"]);
    expect(verbose.code).toBe(0);
    expect(verbose.stdout).toMatch(
      /^1 thread is fine with .*, which shapes bedrock requests; a plain agent's are refused: consecutive_same_role \(B6\)$/m,
    );
    const rescanJson = statusOf(jsonLines((await runCliHere(["scan", ...flags, "--json"])).stdout));
    expect(rescanJson["oa-broken-send-1"]).toEqual(["clean", "openai", "thread"]);
    expect(rescanJson["br-broken-send-1"]).toEqual(["reshape", "bedrock", "thread"]);

    // What the report says is what the real clients meet: a plain OpenAI agent answers; a plain Bedrock agent
    // is refused, the same agent with the middleware answers.
    const rejected = bedrock.stub.rejections.length;
    await expect(nextMessage("createAgent", openai, store.saver, "oa-broken-send-1", false)).resolves.toMatch(
      /^answer/,
    );
    await expect(nextMessage("createAgent", bedrock, store.saver, "br-broken-send-1", false)).rejects.toThrow();
    expect(bedrock.stub.rejections.length).toBe(rejected + 1);
    await expect(nextMessage("createAgent", bedrock, store.saver, "br-broken-send-1", true)).resolves.toMatch(
      /^answer/,
    );
  });

  it("--provider decides for every thread, and says it was given", async (context) => {
    const store = await openTestStore("SqliteSaver", context);
    await seedThreads(store.saver, await model("openai"), { brokenSend: 1, prefix: "oa-" });
    const scan = await runCliHere(["scan", "--sqlite", store.file!, "--provider", "gemini", "--json"]);
    expect(statusOf(jsonLines(scan.stdout))).toEqual({ "oa-broken-send-1": ["broken", "gemini", "option"] });
  });
});
