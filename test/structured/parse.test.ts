import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import { z } from "zod";
import { outputFormatOf } from "../../src/structured/format";
import {
  PromptedStructuredOutputError,
  answerCandidates,
  answerText,
  balancedSpans,
  parseStructuredAnswer,
  resolveStructuredAnswer,
} from "../../src/structured/parse";

const weather = outputFormatOf(z.object({ city: z.string(), tempC: z.number() }));

describe("answerCandidates", () => {
  it("takes a bare JSON answer as is", () => {
    expect(answerCandidates(' {"city":"Paris","tempC":21} ')).toContainEqual({ city: "Paris", tempC: 21 });
  });

  it("reads fenced blocks as bracket spans, left to right", () => {
    const text = 'Here:\n```\n{"other":1}\n```\nand\n```json\n{"city":"Paris","tempC":21}\n```\nDone.';
    expect(answerCandidates(text)).toEqual([{ other: 1 }, { city: "Paris", tempC: 21 }]);
  });

  it("finds JSON with text around it, ignoring braces inside strings", () => {
    const text = 'Sure! The answer is {"city":"Pa}ris {x","tempC":21}. Hope that helps {not json}.';
    expect(answerCandidates(text)).toEqual([{ city: "Pa}ris {x", tempC: 21 }]);
  });

  it("keeps scanning inside a span that does not parse", () => {
    expect(balancedSpans('{broken {"a":1} }').map((s) => s.text)).toEqual(['{"a":1}']);
  });

  it("finds arrays and several values, left to right", () => {
    expect(answerCandidates('first [1,2] then {"b":true}')).toEqual([[1, 2], { b: true }]);
  });

  it("finds nothing in plain text", () => {
    expect(answerCandidates("It is sunny in Paris.")).toEqual([]);
  });
});

describe("answerText", () => {
  it("joins text blocks and skips reasoning blocks", () => {
    const message = new AIMessage({
      content: [
        { type: "reasoning", reasoning: '{"city":"no"}' },
        { type: "text", text: '{"city":"Paris",' },
        { type: "text", text: '"tempC":21}' },
      ],
    });
    expect(answerText(message)).toBe('{"city":"Paris","tempC":21}');
  });
});

describe("parseStructuredAnswer", () => {
  it("skips candidates the schema rejects", async () => {
    const text = 'Draft: {"city":"Paris"}\nFinal: {"city":"Paris","tempC":21}';
    await expect(parseStructuredAnswer(text, weather)).resolves.toEqual({
      ok: true,
      value: { city: "Paris", tempC: 21 },
    });
  });

  it("reports the issues of the best guess", async () => {
    const result = await parseStructuredAnswer('{"city":"Paris","tempC":"warm"}', weather);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues).toEqual([expect.stringMatching(/^tempC: /)]);
  });

  it("says when there is no JSON, or no reply at all", async () => {
    await expect(parseStructuredAnswer("Sunny.", weather)).resolves.toEqual({
      ok: false,
      issues: ["the reply contains no JSON value"],
    });
    await expect(parseStructuredAnswer("  ", weather)).resolves.toEqual({ ok: false, issues: ["the reply is empty"] });
  });
});

describe("resolveStructuredAnswer", () => {
  const valid = '{"city":"Paris","tempC":21}';

  it("makes no call when the answer is valid", async () => {
    const askAgain = vi.fn();
    const resolved = await resolveStructuredAnswer(new AIMessage(valid), weather, askAgain);
    expect(resolved).toMatchObject({ value: { city: "Paris", tempC: 21 }, corrections: 0 });
    expect(askAgain).not.toHaveBeenCalled();
  });

  it("asks once with a follow-up that ends with a user message, and uses the corrected answer", async () => {
    const followUps: BaseMessage[][] = [];
    const corrected = new AIMessage(valid);
    const resolved = await resolveStructuredAnswer(
      new AIMessage("It is 21 degrees in Paris."),
      weather,
      async (followUp) => {
        followUps.push(followUp);
        return corrected;
      },
    );
    expect(resolved).toMatchObject({ value: { city: "Paris", tempC: 21 }, corrections: 1 });
    expect(resolved.answer).toBe(corrected);
    const [followUp] = followUps;
    expect(followUp).toHaveLength(2);
    expect(AIMessage.isInstance(followUp[0]) && followUp[0].content).toBe("It is 21 degrees in Paris.");
    expect(HumanMessage.isInstance(followUp[1])).toBe(true);
    expect(followUp[1].content).toMatch(/no JSON value/);
    expect(followUp[1].content).toMatch(/"tempC"/);
  });

  it("sends a blank answer back as non-blank text, without its tool calls", async () => {
    let followUp: BaseMessage[] = [];
    const answer = new AIMessage({ content: "", tool_calls: [] });
    await resolveStructuredAnswer(answer, weather, async (f) => {
      followUp = f;
      return new AIMessage(valid);
    });
    expect(followUp[0].content).toBe("(empty reply)");
  });

  it("throws PromptedStructuredOutputError with the raw answers and issues when still invalid", async () => {
    const error = await resolveStructuredAnswer(
      new AIMessage("no json"),
      weather,
      async () => new AIMessage('{"city":"Paris"}'),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PromptedStructuredOutputError);
    const typed = error as PromptedStructuredOutputError;
    expect(typed.raw).toBe('{"city":"Paris"}');
    expect(typed.issues).toEqual([expect.stringMatching(/^tempC: /)]);
    expect(typed.attempts.map((a) => a.raw)).toEqual(["no json", '{"city":"Paris"}']);
    expect(typed.message).toMatch(/after 1 corrective call/);
  });

  it("makes one corrective call, no more", async () => {
    const askAgain = vi.fn(async () => new AIMessage("still no json"));
    await expect(resolveStructuredAnswer(new AIMessage("x"), weather, askAgain)).rejects.toThrow(
      /after 1 corrective call/,
    );
    expect(askAgain).toHaveBeenCalledTimes(1);
  });
});

describe("PromptedStructuredOutputError.find", () => {
  it("finds the error in a cause chain", () => {
    const inner = new PromptedStructuredOutputError([{ raw: "x", issues: ["bad"] }]);
    const wrapped = new Error("wrapped", { cause: new Error("middle", { cause: inner }) });
    expect(PromptedStructuredOutputError.find(wrapped)).toBe(inner);
    expect(PromptedStructuredOutputError.find(new Error("other"))).toBeUndefined();
  });

  it("an error named alike without a list of attempts is not it; no attempts at all still builds an error", () => {
    const lookalike = Object.assign(new Error("x"), { name: "PromptedStructuredOutputError", attempts: undefined });
    expect(PromptedStructuredOutputError.find(lookalike)).toBeUndefined();
    expect(new PromptedStructuredOutputError([]).attempts).toEqual([]);
  });
});

describe("several valid values: the rule", () => {
  const second = '{"city":"Lyon","tempC":18}';

  it("the last valid value wins", async () => {
    const result = await parseStructuredAnswer(`Draft: {"city":"Paris","tempC":21}\nFinal: ${second}`, weather);
    expect(result).toEqual({ ok: true, value: { city: "Lyon", tempC: 18 } });
  });

  it("a whole answer that is JSON is the one value", () => {
    expect(answerCandidates(` ${second} `)).toEqual([{ city: "Lyon", tempC: 18 }]);
  });
});

describe("hostile text: linear, never throws", () => {
  const hostile: [string, string][] = [
    ["'{' x 20,000", "{".repeat(20_000)],
    ["'{\"' x 10,000", '{"'.repeat(10_000)],
    ["'[' x 20,000", "[".repeat(20_000)],
    ["unclosed brackets around a value", `${"{ [ ".repeat(5_000)}{"city":"Paris","tempC":21}`],
    ["an unclosed ``` fence then a long word", `\`\`\`${"a".repeat(20_000)}`],
    ["many unclosed fences", "```json\n{".repeat(5_000)],
    ["a stray quote in prose before JSON", `It is 5" tall {it's} ${'"'.repeat(3)} {"city":"Paris","tempC":21}`],
    ["wrong closing brackets", `${"{]".repeat(10_000)}{"city":"Paris","tempC":21}`],
    ["deeply nested arrays", `${"[".repeat(50_000)}${"]".repeat(50_000)}`],
  ];

  it.each(hostile)("%s", async (_name, text) => {
    expect(() => balancedSpans(text)).not.toThrow();
    expect(() => answerCandidates(text)).not.toThrow();
    const result = await parseStructuredAnswer(text, weather);
    if (text.includes('{"city":"Paris","tempC":21}'))
      expect(result.ok && result.value).toEqual({ city: "Paris", tempC: 21 });
  });

  it("a stray quote in prose does not hide the JSON after it", () => {
    expect(answerCandidates('Measured 5" {tall} and then {"a":1}')).toContainEqual({ a: 1 });
  });

  it("never throws on arbitrary strings (fast-check)", async () => {
    const alphabet = fc.constantFrom(
      "{",
      "}",
      "[",
      "]",
      '"',
      "\\",
      "`",
      "```",
      "json",
      "\n",
      " ",
      ":",
      ",",
      "1",
      "a",
      '"city"',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.array(alphabet, { maxLength: 200 }).map((parts) => parts.join("")),
        ),
        async (text) => {
          balancedSpans(text);
          answerCandidates(text);
          const result = await parseStructuredAnswer(text, weather);
          expect(typeof result.ok).toBe("boolean");
        },
      ),
      { numRuns: 400 },
    );
  });

  it("every span it returns parses as JSON", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.json(), fc.constantFrom("x", " ", "{", "]", "}")), { maxLength: 8 }),
        (parts) => {
          const text = parts.join(" ");
          for (const span of balancedSpans(text)) expect(() => JSON.parse(span.text)).not.toThrow();
        },
      ),
      { numRuns: 300 },
    );
  });
});
