import { ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { findToolCallProblems } from "../../src/engine";
import { healStoredMessages, resultsInWrites } from "../../src/integrations/heal";
import { isSyntheticResult } from "../../src/messages/inspect";
import { ai, aiWithCalls, human, shape, toolResult } from "../support/builders";
import { createStoredHealer } from "../../src/integrations/heal";
import { errorOf, inputError, revokedObject, throwingAt, throwingObject } from "../support/hostile";

const valid = (messages: Parameters<typeof findToolCallProblems>[0]) =>
  findToolCallProblems(messages, { provider: "openai", trailingIsProblem: false });

describe("resultsInWrites", () => {
  it("takes real tool results of the wanted calls from one channel's writes, single or listed", () => {
    const a = toolResult("a");
    const b = toolResult("b");
    const found = resultsInWrites(
      [
        ["t1", "messages", [a]],
        ["t2", "messages", b],
        ["t3", "other", [toolResult("c")]],
        ["t4", "messages", [toolResult("z")]],
      ],
      "messages",
      new Set(["a", "b", "c"]),
    );
    expect([...found.keys()]).toEqual(["a", "b"]);
    expect(found.get("a")).toBe(a);
  });
});

describe("healStoredMessages", () => {
  it("returns the very input array for a clean history, and for one that only ends on open calls", () => {
    const clean = [human(), aiWithCalls("a"), toolResult("a"), ai()];
    expect(healStoredMessages(clean).messages).toBe(clean);
    const open = [human(), aiWithCalls("a", "b"), toolResult("a")];
    expect(healStoredMessages(open)).toEqual({ messages: open, repairs: [], salvaged: [] });
  });

  it("answers an orphan call that is not the last exchange", () => {
    const history = [human(), aiWithCalls("a"), human("next"), ai("fine")];
    const { messages, repairs } = healStoredMessages(history, { provider: "openai" });
    expect(shape(messages)).toBe("human, ai[a], tool(a), human, ai");
    expect(repairs.map((r) => r.action)).toEqual(["synthesized_result"]);
    expect(valid(messages)).toEqual([]);
  });

  it("keeps the last exchange untouched while it has unanswered calls, repairing only what is before it", () => {
    const last = aiWithCalls("b");
    const steer = human("steering");
    const history = [human(), aiWithCalls("a"), human("next"), last, steer];
    const { messages } = healStoredMessages(history, { provider: "openai" });
    expect(shape(messages)).toBe("human, ai[a], tool(a), human, ai[b], human");
    expect(messages.slice(-2)).toEqual([last, steer]);
    expect(messages[4]).toBe(last);
  });

  it("drops duplicate results and converts orphan results even while the last exchange is open", () => {
    const history = [
      human(),
      aiWithCalls("a"),
      toolResult("a", "same"),
      toolResult("a", "same"),
      toolResult("ghost"),
      human(),
      aiWithCalls("b"),
    ];
    const { messages, repairs } = healStoredMessages(history, { provider: "openai" });
    expect(shape(messages)).toBe("human, ai[a], tool(a), human, human, ai[b]");
    expect(repairs.map((r) => r.action).sort()).toEqual(["converted_result", "dropped_result"]);
  });

  it("with closeOpen, closes the exchange the history ends on", () => {
    const { messages } = healStoredMessages(
      [human(), aiWithCalls("a", "b"), toolResult("a")],
      { provider: "openai" },
      { closeOpen: true },
    );
    expect(shape(messages)).toBe("human, ai[a,b], tool(a), tool(b)");
    expect(isSyntheticResult(messages[3])).toBe(true);
  });

  it("does not protect a last exchange whose open calls were all abandoned", () => {
    const history = [human(), aiWithCalls("a"), human("new input")];
    expect(healStoredMessages(history, { provider: "openai" }).repairs).toEqual([]);
    const healed = healStoredMessages(history, { provider: "openai" }, { abandoned: new Set(["a"]) });
    expect(shape(healed.messages)).toBe("human, ai[a], tool(a), human");
  });

  it("puts salvaged real results back instead of placeholders, and replaces placeholders already there", () => {
    const real = toolResult("a", "real a");
    const salvage = new Map([["a", real]]);
    const closed = healStoredMessages(
      [human(), aiWithCalls("a", "b")],
      { provider: "openai" },
      { closeOpen: true, salvage },
    );
    expect(shape(closed.messages)).toBe("human, ai[a,b], tool(a), tool(b)");
    expect(closed.messages[2]).toBe(real);
    expect(isSyntheticResult(closed.messages[3])).toBe(true);
    expect(closed.salvaged).toEqual(["a"]);
    expect(closed.repairs[0]).toMatchObject({ action: "salvaged_result", toolCallId: "a", index: 1 });

    const withPlaceholders = closed.messages.map((m, i) => (i === 2 ? placeholderFor("a") : m));
    const upgraded = healStoredMessages(withPlaceholders, { provider: "openai" }, { salvage });
    expect(upgraded.messages[2]).toBe(real);
    expect(upgraded.messages).toHaveLength(4);
  });

  it("leaves calls that already have a real result alone", () => {
    const history = [human(), aiWithCalls("a"), toolResult("a", "kept"), ai()];
    const result = healStoredMessages(history, {}, { salvage: new Map([["a", toolResult("a", "other")]]) });
    expect(result.messages).toBe(history);
    expect(result.repairs).toEqual([]);
  });
});

function placeholderFor(id: string): ToolMessage {
  return new ToolMessage({
    content: "did not run",
    tool_call_id: id,
    status: "error",
    id: `tool-repair-${id}`,
    additional_kwargs: { tool_call_repair: { synthetic: true, reason: "orphan_call" } },
  });
}

describe("healStoredMessages on values that are not messages", () => {
  it("leaves them as they are (another reducer's data)", () => {
    const values = ["hi", { role: "user", content: "x" }] as never[];
    expect(healStoredMessages(values).messages).toBe(values);
  });
});

describe("createStoredHealer / healStoredMessages check their arguments", () => {
  it("options and heal options are read once and checked, each named", () => {
    expect(errorOf(() => createStoredHealer(throwingObject() as never))).toMatchObject(
      inputError("options", "createStoredHealer: options could not be read (GETTER)"),
    );
    expect(errorOf(() => createStoredHealer(revokedObject() as never))).toMatchObject(inputError("options"));
    expect(errorOf(() => healStoredMessages([human()], { provider: "gpt" } as never))).toMatchObject(
      inputError("options.provider"),
    );
    expect(errorOf(() => healStoredMessages([human()], {}, { salvage: {} } as never))).toMatchObject(
      inputError("heal.salvage", "expected a Map"),
    );
    expect(errorOf(() => healStoredMessages([human()], {}, { abandoned: ["a"] } as never))).toMatchObject(
      inputError("heal.abandoned", "expected a Set"),
    );
    expect(errorOf(() => healStoredMessages([human()], {}, { closeOpen: 1 } as never))).toMatchObject(
      inputError("heal.closeOpen"),
    );
    expect(errorOf(() => createStoredHealer().heal([human()], throwingObject() as never))).toMatchObject(
      inputError("heal.closeOpen", "could not be read (GETTER)"),
    );
  });

  it("messages that are not an array, or cannot be read, are named", () => {
    expect(errorOf(() => healStoredMessages(null as never))).toMatchObject(
      inputError("messages", "healStoredMessages: messages is null"),
    );
    expect(errorOf(() => healStoredMessages(throwingAt([human(), aiWithCalls("a"), human()], 1)))).toMatchObject({
      name: "ToolCallRepairInputError",
      message: expect.stringContaining("could not be read (IDX)"),
    });
  });
});
