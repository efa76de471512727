/** The thread judgements and the stored heal (src/threads/heal-thread.ts): their arguments are checked first. */
import { describe, expect, it } from "vitest";
import {
  healStoredThread,
  storedThreadProblems,
  structuralProblems,
  awaitsResume,
} from "../../src/threads/heal-thread";
import { ai, aiWithCalls, human, shape, toolResult } from "../support/builders";
import { errorOf, inputError, revokedArray, throwingAt } from "../support/hostile";

describe("healStoredThread", () => {
  it("a list holding what is not a LangChain message is an input error naming the index (it came back unchanged)", () => {
    expect(errorOf(() => healStoredThread([null] as never))).toMatchObject({
      ...inputError("messages", "messages[0] is null, not a LangChain message"),
      index: 0,
    });
    expect(errorOf(() => healStoredThread([human(), { role: "user", content: "x" }] as never))).toMatchObject({
      index: 1,
    });
    expect(errorOf(() => healStoredThread([human(), , ai()] as never))).toMatchObject({
      ...inputError("messages", "messages[1] is a hole"),
      index: 1,
    }); // eslint-disable-line no-sparse-arrays
    expect(errorOf(() => healStoredThread(throwingAt([human(), ai()], 1)))).toMatchObject(
      inputError("messages", "could not be read (IDX)"),
    );
    expect(errorOf(() => healStoredThread(null as never))).toMatchObject(
      inputError("messages", "healStoredThread: messages is null"),
    );
  });

  it("options are checked: salvage is a Map", () => {
    expect(errorOf(() => healStoredThread([human()], { salvage: {} as never }))).toMatchObject(
      inputError("options.salvage"),
    );
    expect(errorOf(() => healStoredThread([human()], "x" as never))).toMatchObject(inputError("options"));
  });

  it("still heals a real thread", () => {
    const healed = healStoredThread([human(), aiWithCalls("a"), human("next")]);
    expect(shape(healed.messages)).toBe("human, ai[a], tool(a), human");
    expect(healStoredThread([human(), aiWithCalls("a"), toolResult("a")]).repairs).toEqual([]);
  });
});

describe("structuralProblems / storedThreadProblems / awaitsResume", () => {
  it("a revoked array proxy or a non-array names the function and the argument", () => {
    for (const [name, fn] of [
      ["structuralProblems", structuralProblems],
      ["storedThreadProblems", storedThreadProblems],
      ["awaitsResume", awaitsResume],
    ] as const) {
      expect(errorOf(() => fn(revokedArray()))).toMatchObject(
        inputError("messages", `${name}: messages is an unreadable object; expected an array of messages`),
      );
      expect(errorOf(() => fn(42 as never))).toMatchObject(inputError("messages", `${name}: messages is 42`));
    }
  });

  it("the provider is checked as this function's argument", () => {
    expect(errorOf(() => structuralProblems([human()], "gpt" as never))).toMatchObject(
      inputError("provider", 'structuralProblems: provider is "gpt"; expected one of openai'),
    );
    expect(structuralProblems([human(), aiWithCalls("a"), human()], "openai").map((p) => p.kind)).toEqual([
      "orphan_call",
    ]);
  });
});
