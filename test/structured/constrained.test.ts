/**
 * The Bedrock `outputConfig` mechanism through the real ChatBedrockConverse and AWS SDK: a derived model whose
 * invocationParams adds the field, on both request paths (converse, converse-stream), leaving the user's model
 * and its (shared) client untouched.
 */
import { HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { bedrockOutputConfig, formatNameOf, withBedrockOutputConfig } from "../../src/structured/constrained";
import { outputFormatOf } from "../../src/structured/format";
import { bedrockModel } from "../support/stubs/bedrock";
import { bedrockStubs, outputSchemaOf, requestsOf, VALID, Weather } from "./fixtures";
import { ZOD_4_PINNED } from "../support/versions";
import { boundaryError, errorOf, inputError, throwingObject } from "../support/hostile";

const stub = bedrockStubs();

/** The schema bedrockOutputConfig sends (the subset of `schema`). */
const strictJsonSchema = (jsonSchema: Record<string, unknown>) =>
  JSON.parse((bedrockOutputConfig({ jsonSchema }) as any).textFormat.structure.jsonSchema.schema);

describe("the schema of bedrockOutputConfig (strict JSON schema)", () => {
  it("is the schema in the subset: additionalProperties false on every object, constraints moved, the input untouched", () => {
    const schema = {
      type: "object",
      properties: {
        a: { type: "object", properties: { b: { type: "string", maxLength: 3 } } },
        list: { type: "array", items: { type: "object", properties: {} } },
        either: { anyOf: [{ type: "object" }, { type: "string" }] },
        node: { $ref: "#/$defs/Node" },
      },
      $defs: { Node: { type: "object", properties: { x: { type: "number" } } } },
    };
    const before = JSON.stringify(schema);
    const strict = strictJsonSchema(schema) as any;
    expect(JSON.stringify(schema)).toBe(before);
    expect(strict.additionalProperties).toBe(false);
    expect(strict.properties.a.additionalProperties).toBe(false);
    expect(strict.properties.a.properties.b).toEqual({ type: "string", description: "{maxLength: 3}" });
    expect(strict.properties.list.items.additionalProperties).toBe(false);
    expect(strict.properties.either.anyOf[0].additionalProperties).toBe(false);
    expect(strict.properties.either.anyOf[1]).toEqual({ type: "string" });
    expect(strict.properties.node).toEqual({
      type: "object",
      properties: { x: { type: "number" } },
      additionalProperties: false,
    });
    expect(strict.$defs).toBeUndefined();
  });

  it("names what the subset cannot express (an open object, a recursive schema)", () => {
    const open = { type: "object", properties: { a: { type: "object", additionalProperties: true } } };
    expect(errorOf(() => strictJsonSchema(open))).toMatchObject(inputError("format.jsonSchema", "an open object"));
    const recursive = {
      $ref: "#/$defs/T",
      $defs: { T: { type: "object", properties: { next: { $ref: "#/$defs/T" } } } },
    };
    expect(errorOf(() => strictJsonSchema(recursive))).toMatchObject(
      inputError("format.jsonSchema", "a recursive schema"),
    );
  });
});

describe("bedrockOutputConfig", () => {
  it("is Converse's textFormat json_schema, the schema as a JSON string", () => {
    const config = bedrockOutputConfig(outputFormatOf(Weather)) as any;
    expect(config.textFormat.type).toBe("json_schema");
    expect(config.textFormat.structure.jsonSchema.name).toBe("structured_response");
    expect(JSON.parse(config.textFormat.structure.jsonSchema.schema)).toMatchObject({
      type: "object",
      additionalProperties: false,
      required: ["city", "tempC", "sky"],
    });
  });

  it.skipIf(ZOD_4_PINNED !== undefined)("names the schema by its title, cleaned to Bedrock's pattern", () => {
    expect(formatNameOf({ name: "Weather report" })).toBe("Weather_report");
    expect(formatNameOf({ name: "???" })).toBe("structured_response");
    expect(formatNameOf({}, new Set(["structured_response"]))).toBe("structured_response_2");
    const titled = outputFormatOf(z.object({ a: z.string() }).meta({ title: "Answer" }));
    expect((bedrockOutputConfig(titled) as any).textFormat.structure.jsonSchema.name).toBe("Answer");
  });
});

describe("withBedrockOutputConfig", () => {
  it("sends outputConfig on converse and converse-stream; the original model on the same client sends none", async () => {
    const s = await stub({ script: [{ text: VALID }, { text: VALID }, { text: "plain" }] });
    const model = bedrockModel(s);
    const constrained = withBedrockOutputConfig(model, bedrockOutputConfig(outputFormatOf(Weather)));

    expect((await constrained.invoke([new HumanMessage("hi")])).content).toBe(VALID);
    let streamed = "";
    for await (const chunk of await constrained.stream([new HumanMessage("hi")])) streamed += chunk.content as string;
    expect(streamed).toBe(VALID);
    expect((await model.invoke([new HumanMessage("hi")])).content).toBe("plain");

    const [converse, converseStream, plain] = requestsOf(s);
    expect(outputSchemaOf(converse)).toMatchObject({ required: ["city", "tempC", "sky"] });
    expect(outputSchemaOf(converseStream)).toMatchObject({ required: ["city", "tempC", "sky"] });
    expect(plain.outputConfig).toBeUndefined();
    expect(s.rejections).toEqual([]);
    expect(Object.hasOwn(model, "invocationParams")).toBe(false);
  });

  it("keeps the model's own call options and bindings (tools, thinking)", async () => {
    const s = await stub({ script: [{ text: VALID }] });
    const thinking = { thinking: { type: "enabled", budget_tokens: 1024 } };
    const model = bedrockModel(s, { additionalModelRequestFields: thinking });
    const constrained = withBedrockOutputConfig(model, bedrockOutputConfig(outputFormatOf(Weather)));
    await constrained
      .bindTools([
        { type: "function", function: { name: "t", description: "d", parameters: { type: "object", properties: {} } } },
      ])
      .invoke([new HumanMessage("hi")]);
    const [request] = requestsOf(s);
    expect(request.additionalModelRequestFields).toEqual(thinking);
    expect(request.toolConfig?.tools.map((t) => t.toolSpec.name)).toEqual(["t"]);
    expect(request.outputConfig).toBeDefined();
  });

  it("is a TypeError on a model without invocationParams", () => {
    expect(() => withBedrockOutputConfig({}, {})).toThrow(/expected a ChatBedrockConverse/);
  });
});

describe("argument checks: an input error naming the argument, never a raw error", () => {
  it("bedrockOutputConfig takes a format with a JSON schema object", () => {
    expect(errorOf(() => bedrockOutputConfig(undefined as never))).toMatchObject({ name: "ToolCallRepairInputError" });
    expect(errorOf(() => bedrockOutputConfig(Weather as never))).toMatchObject(
      inputError("format.jsonSchema", "a schema that is not an object"),
    );
    expect(errorOf(() => bedrockOutputConfig({ jsonSchema: { type: "object" }, name: 3 } as never))).toMatchObject({
      name: "ToolCallRepairInputError",
    });
    expect(errorOf(() => bedrockOutputConfig(throwingObject() as never))).toMatchObject(
      boundaryError("bedrockOutputConfig", "GETTER"),
    );
    const deep: Record<string, unknown> = { type: "array" };
    let node = deep;
    for (let i = 0; i < 80; i++) node = (node.items = { type: "array" }) as Record<string, unknown>;
    node.items = deep; // a cycle of objects: deeper than the subset goes
    const nested = inputError("format.jsonSchema", "nested deeper than 64 levels");
    expect(errorOf(() => bedrockOutputConfig({ jsonSchema: deep }))).toMatchObject(nested);
  });

  it("bedrockOutputConfig and withBedrockOutputConfig name what they cannot use", () => {
    expect(errorOf(() => bedrockOutputConfig({ jsonSchema: 42 as never }))).toMatchObject(
      inputError("format.jsonSchema", "bedrockOutputConfig: format.jsonSchema cannot be sent as a constrained format"),
    );
    expect(errorOf(() => withBedrockOutputConfig(null as never, {}))).toMatchObject(inputError("model"));
    expect(errorOf(() => withBedrockOutputConfig(throwingObject(), {}))).toMatchObject(
      boundaryError("withBedrockOutputConfig", "GETTER"),
    );
  });
});
