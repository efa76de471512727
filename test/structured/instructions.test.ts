import { AIMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { ChatPromptTemplate } from "@langchain/core/prompts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { outputFormatOf } from "../../src/structured/format";
import {
  correctionMessage,
  formatInstructions,
  promptWith,
  systemMessageWith,
  withSystemInstructions,
} from "../../src/structured/format";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { withPromptedStructuredOutput } from "../../src/structured/react-agent";
import { boundaryError, errorOf } from "../support/hostile";

const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };

describe("formatInstructions", () => {
  it("puts the format's own prompt first, then the schema", () => {
    const text = formatInstructions({ jsonSchema: schema, prompt: "Answer in French." });
    expect(text.startsWith("Answer in French.")).toBe(true);
    expect(text).toContain(JSON.stringify(schema));
    expect(text).toMatch(/only|nothing else/);
  });

  it("writes the JSON schema of a zod schema's OutputFormat", () => {
    expect(formatInstructions(outputFormatOf(z.object({ city: z.string() })))).toContain('"city":{"type":"string"}');
  });

  it("has no prompt part when the format has none", () => {
    expect(formatInstructions({ jsonSchema: schema }).startsWith("When you give your final answer")).toBe(true);
  });
});

describe("correctionMessage", () => {
  it("is a user message listing the issues and the schema", () => {
    const message = correctionMessage(["a: Required"], { jsonSchema: schema });
    expect(HumanMessage.isInstance(message)).toBe(true);
    expect(message.content).toContain("- a: Required");
    expect(message.content).toContain(JSON.stringify(schema));
  });
});

describe("systemMessageWith", () => {
  it("appends to string content and keeps the other fields", () => {
    const original = new SystemMessage({
      content: "Be brief.",
      id: "sys-1",
      name: "rules",
      additional_kwargs: { k: 1 },
    });
    const next = systemMessageWith(original, "FORMAT");
    expect(next).not.toBe(original);
    expect(next.content).toBe("Be brief.\n\nFORMAT");
    expect(next.id).toBe("sys-1");
    expect(next.name).toBe("rules");
    expect(next.additional_kwargs).toEqual({ k: 1 });
    expect(next.lc_kwargs.id).toBe("sys-1");
    expect(original.content).toBe("Be brief.");
  });

  it("appends a text block to block content, keeping cache markers on earlier blocks", () => {
    const original = new SystemMessage({
      content: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
    });
    expect(systemMessageWith(original, "FORMAT").content).toEqual([
      { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
      { type: "text", text: "FORMAT" },
    ]);
  });

  it("uses the text alone for an empty system message", () => {
    expect(systemMessageWith(new SystemMessage(""), "FORMAT").content).toBe("FORMAT");
    expect(promptWith(undefined, "FORMAT")).toBe("FORMAT");
    expect(promptWith("Be brief.", "FORMAT")).toBe("Be brief.\n\nFORMAT");
  });
});

describe("withSystemInstructions", () => {
  it("extends a leading system message", () => {
    const out = withSystemInstructions([new SystemMessage("Be brief."), new HumanMessage("hi")], "FORMAT");
    expect(out).toHaveLength(2);
    expect(out[0].content).toBe("Be brief.\n\nFORMAT");
  });

  it("adds a system message when there is none", () => {
    const out = withSystemInstructions([["human", "hi"], new AIMessage("yo")], "FORMAT");
    expect(out.map((m) => m.getType())).toEqual(["system", "human", "ai"]);
  });

  it("reads a PromptValue and a string", async () => {
    const value = await ChatPromptTemplate.fromMessages([
      ["system", "S"],
      ["human", "{q}"],
    ]).invoke({ q: "hi" });
    expect(withSystemInstructions(value, "FORMAT").map((m) => m.content)).toEqual(["S\n\nFORMAT", "hi"]);
    expect(withSystemInstructions("hi", "FORMAT").map((m) => m.getType())).toEqual(["system", "human"]);
  });
});

describe("a format the instructions cannot write", () => {
  it("a schema JSON cannot write (a cycle) is an input error of the public function", () => {
    const cyclic: Record<string, unknown> = { type: "object" };
    cyclic.self = cyclic;
    const params = { llm: new FakeListChatModel({ responses: [] }), tools: [], responseFormat: cyclic } as never;
    const error = errorOf(() => withPromptedStructuredOutput(params, { strategy: "prompted" }));
    expect(error).toMatchObject(boundaryError("withPromptedStructuredOutput"));
    expect(error.message).toMatch(/circular/i);
    const format = outputFormatOf(z.object({ city: z.string() }));
    expect(correctionMessage(["x"], format).content).toContain("- x");
  });
});
