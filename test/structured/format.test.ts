import { providerStrategy, toolStrategy } from "langchain";
import { describe, expect, it } from "vitest";
import { z as z4 } from "zod";
import { z as z3 } from "zod/v3";
import { agentOutputFormat, outputFormatOf, reactOutputFormat } from "../../src/structured/format";
import { ZOD_4_PINNED } from "../support/versions";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { withPromptedStructuredOutput } from "../../src/structured/react-agent";
import { boundaryError, errorOf, revokedObject, throwingObject } from "../support/hostile";

const jsonSchema = {
  type: "object",
  properties: { city: { type: "string" }, tempC: { type: "number" } },
  required: ["city", "tempC"],
  additionalProperties: false,
};

describe("outputFormatOf", () => {
  it.each([
    ["zod 4", z4.object({ city: z4.string(), tempC: z4.number() })],
    ["zod 3", z3.object({ city: z3.string(), tempC: z3.number() })],
    ["JSON schema", jsonSchema],
  ])("%s: shows a JSON schema and validates with it", async (_name, schema) => {
    const format = outputFormatOf(schema);
    expect(format.jsonSchema).toMatchObject({ type: "object", properties: { city: { type: "string" } } });
    expect(format.jsonSchema).not.toHaveProperty("$schema");
    await expect(format.validate({ city: "Paris", tempC: 21 })).resolves.toEqual({
      ok: true,
      value: { city: "Paris", tempC: 21 },
    });
    const bad = await format.validate({ city: 3 });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.issues.join("\n")).toMatch(/city/);
      expect(bad.issues.join("\n")).toMatch(/tempC/);
    }
  });

  it("returns the zod output (defaults and transforms applied)", async () => {
    const format = outputFormatOf(
      z4.object({ city: z4.string().transform((s) => s.toUpperCase()), n: z4.number().default(1) }),
    );
    await expect(format.validate({ city: "paris" })).resolves.toEqual({ ok: true, value: { city: "PARIS", n: 1 } });
  });

  it("takes a Standard JSON Schema (validate + jsonSchema)", async () => {
    const schema = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: (value: unknown) =>
          typeof value === "object" && value !== null && typeof (value as { a?: unknown }).a === "string"
            ? { value }
            : { issues: [{ message: "a must be a string", path: [{ key: "a" }] }] },
        jsonSchema: { input: () => ({ type: "object", properties: { a: { type: "string" } } }), output: () => ({}) },
      },
    };
    const format = outputFormatOf(schema);
    expect(format.jsonSchema).toEqual({ type: "object", properties: { a: { type: "string" } } });
    await expect(format.validate({ a: "x" })).resolves.toEqual({ ok: true, value: { a: "x" } });
    await expect(format.validate({ a: 1 })).resolves.toEqual({ ok: false, issues: ["a: a must be a string"] });
  });

  it("rejects a Standard Schema that has no JSON form", () => {
    expect(() => outputFormatOf({ "~standard": { version: 1, vendor: "x", validate: () => ({ value: 1 }) } })).toThrow(
      /Unsupported response format for 'schema'/,
    );
  });

  it("rejects what is not a schema with a TypeError naming the argument", () => {
    expect(() => outputFormatOf("nope")).toThrow(TypeError);
    expect(() => outputFormatOf("nope", undefined, "responseFormat")).toThrow(
      /Unsupported response format for 'responseFormat'/,
    );
    expect(() => outputFormatOf({ city: "Paris" })).toThrow(/a JSON schema object \(with a keyword/);
    expect(() => outputFormatOf({})).toThrow(TypeError);
    expect(() => outputFormatOf([jsonSchema])).toThrow(TypeError);
  });

  it.skipIf(ZOD_4_PINNED !== undefined)("takes the schema's title as the format's name", () => {
    expect(outputFormatOf({ ...jsonSchema, title: "Weather" }).name).toBe("Weather");
    expect(outputFormatOf(z4.object({ a: z4.string() }).meta({ title: "A" })).name).toBe("A");
  });
});

describe("reactOutputFormat", () => {
  it("reads createReactAgent's { schema, prompt } form", async () => {
    const format = reactOutputFormat({ schema: z4.object({ a: z4.string() }), prompt: "Answer in French." });
    expect(format.prompt).toBe("Answer in French.");
    expect((await format.validate({ a: "x" })).ok).toBe(true);
  });

  it("takes a bare schema as the schema", () => {
    expect(reactOutputFormat(jsonSchema).prompt).toBeUndefined();
  });
});

describe("agentOutputFormat", () => {
  it("is undefined when there is no format", () => {
    expect(agentOutputFormat(undefined)).toBeUndefined();
    expect(agentOutputFormat({ __responseFormatUndefined: true })).toBeUndefined();
    expect(agentOutputFormat([])).toBeUndefined();
  });

  it("reads toolStrategy and providerStrategy", async () => {
    const schema = z4.object({ a: z4.string() });
    for (const responseFormat of [toolStrategy(schema), providerStrategy(schema)]) {
      const format = agentOutputFormat(responseFormat)!;
      expect(format.jsonSchema).toMatchObject({ properties: { a: { type: "string" } } });
      expect((await format.validate({ a: "x" })).ok).toBe(true);
      expect((await format.validate({ a: 1 })).ok).toBe(false);
    }
  });

  it("accepts any one of a list of schemas", async () => {
    const format = agentOutputFormat([z4.object({ a: z4.string() }), z4.object({ b: z4.number() })])!;
    expect(format.jsonSchema).toHaveProperty("anyOf");
    await expect(format.validate({ b: 2 })).resolves.toEqual({ ok: true, value: { b: 2 } });
    const bad = await format.validate({ c: 1 });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.issues.some((i) => i.startsWith("format 2:"))).toBe(true);
  });
});

describe("argument checks: an input error naming the argument, never a raw error", () => {
  it("a schema whose reads throw, a revoked proxy or a cycle is an input error of the public function", () => {
    const llm = new FakeListChatModel({ responses: [] });
    const cyclic: Record<string, unknown> = { type: "object" };
    cyclic.self = cyclic;
    for (const responseFormat of [throwingObject(), revokedObject(), cyclic, { schema: throwingObject() }]) {
      const params = { llm, tools: [], responseFormat } as never;
      expect(errorOf(() => withPromptedStructuredOutput(params, { strategy: "prompted" }))).toMatchObject(
        boundaryError("withPromptedStructuredOutput"),
      );
    }
  });

  it("names the argument of a schema of no supported kind", () => {
    expect(() => outputFormatOf(42)).toThrow(/Unsupported response format for 'schema'/);
    expect(() => reactOutputFormat({ schema: 42 })).toThrow(/Unsupported response format for 'responseFormat.schema'/);
  });
});
