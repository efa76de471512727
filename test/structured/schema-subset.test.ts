/**
 * The reduction of a JSON schema to the subset constrained decoding takes (schema-subset.ts), checked against
 * the strict Converse stub's subset checker (written from the docs, independently): the reduced schema is always
 * inside the subset, and it accepts every value the full schema accepts (it only loosens), for generated JSON
 * schemas and zod schemas. What cannot be loosened (records, open objects, recursion, tuples) is unsupported.
 */
import { Validator } from "@langchain/core/utils/json_schema";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { z as z3 } from "zod/v3";
import { outputFormatOf } from "../../src/structured/format";
import { subsetSchemaOf } from "../../src/structured/schema-subset";
import { schemaSubsetViolation } from "../support/stubs/bedrock-structured";

type Dict = Record<string, unknown>;
const isDict = (v: unknown): v is Dict => typeof v === "object" && v !== null && !Array.isArray(v);
const accepts = (schema: Dict, value: unknown) =>
  new Validator(JSON.parse(JSON.stringify(schema)) as never, "2020-12", false).validate(value).valid;
/**
 * The schema as the module reads it: an object schema without `additionalProperties` is closed (see the module),
 * where JSON Schema would leave it open. Validity in the properties below is judged on this reading.
 */
const closedAsRead = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(closedAsRead);
  if (!isDict(schema)) return schema;
  const out: Dict = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, closedAsRead(v)]));
  const isObject =
    out.type === "object" || (Array.isArray(out.type) && out.type.includes("object")) || isDict(out.properties);
  if (isObject && !("additionalProperties" in out) && !("patternProperties" in out)) out.additionalProperties = false;
  return out;
};
const reduced = (schema: Dict) => {
  const subset = subsetSchemaOf(schema);
  if (!subset.ok) throw new Error(`unsupported: ${subset.reason}`);
  return subset.schema;
};

describe("subsetSchemaOf", () => {
  it("moves what the subset lacks into description, as Anthropic's SDKs write it, and closes every object", () => {
    const schema = {
      type: "object",
      description: "A reading.",
      properties: {
        tempC: { type: "integer", minimum: -50, maximum: 60, description: "Celsius." },
        city: { type: "string", minLength: 1, maxLength: 40, pattern: "^[A-Z]" },
        when: { type: "string", format: "date-time" },
        code: { type: "string", format: "regex" },
        tags: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 5, uniqueItems: true },
        some: { type: "array", items: { type: "number", multipleOf: 0.5 }, minItems: 1 },
      },
      required: ["tempC", "city"],
      minProperties: 2,
    };
    expect(reduced(schema)).toEqual({
      type: "object",
      description: "A reading.\n\n{minProperties: 2}",
      properties: {
        tempC: { type: "integer", description: "Celsius.\n\n{minimum: -50, maximum: 60}" },
        city: { type: "string", description: '{minLength: 1, maxLength: 40, pattern: "^[A-Z]"}' },
        when: { type: "string", format: "date-time" },
        code: { type: "string", description: '{format: "regex"}' },
        tags: {
          type: "array",
          items: { type: "string" },
          description: "{minItems: 2, maxItems: 5, uniqueItems: true}",
        },
        some: { type: "array", items: { type: "number", description: "{multipleOf: 0.5}" }, minItems: 1 },
      },
      // Optional properties stay optional (the subset has `required`; nothing is dropped or added).
      required: ["tempC", "city"],
      additionalProperties: false,
    });
  });

  it("a type list gives each branch only the keywords of its type (a nullable object's null branch is just null)", () => {
    const leaf = { type: ["object", "null"], properties: { b: { type: "string" } }, required: ["b"] };
    const schema = { type: ["object", "null"], properties: { a: leaf }, required: ["a"], description: "Outer." };
    const closed = (properties: Dict, required: string[]) => ({
      type: "object",
      properties,
      required,
      additionalProperties: false,
    });
    expect(reduced(schema)).toEqual({
      anyOf: [
        closed({ a: { anyOf: [closed({ b: { type: "string" } }, ["b"]), { type: "null" }] } }, ["a"]),
        { type: "null" },
      ],
      description: "Outer.",
    });
    expect(reduced({ type: ["string", "integer"], minLength: 2, minimum: 1, multipleOf: 2 })).toEqual({
      anyOf: [
        { type: "string", description: "{minLength: 2}" },
        { type: "integer", description: "{minimum: 1, multipleOf: 2}" },
      ],
    });
  });

  it("a schema over the compilation limits (16 union-typed, 24 optional properties; shared $refs count where used) is unsupported", () => {
    const objectOf = (count: number, property: Dict, required: boolean): Dict => {
      const keys = Array.from({ length: count }, (_, i) => `f${i}`);
      return {
        type: "object",
        properties: Object.fromEntries(keys.map((k) => [k, property])),
        ...(required ? { required: keys } : {}),
      };
    };
    const nullable = { type: ["string", "null"] };
    expect(subsetSchemaOf(objectOf(16, nullable, true)).ok).toBe(true);
    expect(subsetSchemaOf(objectOf(17, { anyOf: [{ type: "string" }, { type: "null" }] }, true))).toEqual({
      ok: false,
      reason: expect.stringMatching(/more than 16 properties with union types .*17/),
    });
    expect(subsetSchemaOf(objectOf(24, { type: "string" }, false)).ok).toBe(true);
    expect(subsetSchemaOf(objectOf(25, { type: "string" }, false))).toEqual({
      ok: false,
      reason: "more than 24 optional properties (25)",
    });
    // 9 unions in a definition used twice: 18 where the schema is compiled.
    const shared = { ...objectOf(2, { $ref: "#/$defs/T" }, true), $defs: { T: objectOf(9, nullable, true) } };
    expect(subsetSchemaOf(shared)).toMatchObject({ ok: false, reason: expect.stringMatching(/union types .*18/) });
    for (const count of [16, 17]) {
      const subset = subsetSchemaOf(objectOf(count, nullable, true));
      expect(subset.ok ? schemaSubsetViolation(subset.schema) : "unsupported").toBe(
        count === 16 ? undefined : "unsupported",
      );
    }
  });

  it("inlines internal $refs (zod 3's reuse of #/properties/a too), turns oneOf and type lists into anyOf", () => {
    const Place = z3.object({ name: z3.string() });
    const schema = outputFormatOf(z3.object({ from: Place, to: Place, kind: z3.number().nullable() })).jsonSchema;
    expect(reduced(schema)).toEqual({
      type: "object",
      properties: {
        from: {
          type: "object",
          properties: { name: { type: "string" } },
          required: ["name"],
          additionalProperties: false,
        },
        to: {
          type: "object",
          properties: { name: { type: "string" } },
          required: ["name"],
          additionalProperties: false,
        },
        kind: { anyOf: [{ type: "number" }, { type: "null" }] },
      },
      required: ["from", "to", "kind"],
      additionalProperties: false,
    });
    expect(reduced({ oneOf: [{ type: "string" }, { type: "integer", minimum: 0 }] })).toEqual({
      anyOf: [{ type: "string" }, { type: "integer", description: "{minimum: 0}" }],
    });
  });

  it.each<[string, Dict, RegExp]>([
    [
      "z.record",
      outputFormatOf(z.object({ scores: z.record(z.string(), z.number()) })).jsonSchema,
      /record|propertyNames/,
    ],
    ["zod 3 record", outputFormatOf(z3.object({ scores: z3.record(z3.number()) })).jsonSchema, /a record/],
    [
      "zod 3 passthrough",
      outputFormatOf(z3.object({ extra: z3.object({}).passthrough() })).jsonSchema,
      /an open object/,
    ],
    [
      "z.lazy (recursive)",
      outputFormatOf(z.lazy((): z.ZodType => z.object({ children: z.array(Tree) }))).jsonSchema,
      /recursive/,
    ],
    [
      "a recursive $defs entry",
      { $ref: "#/$defs/T", $defs: { T: { type: "array", items: { $ref: "#/$defs/T" } } } },
      /recursive/,
    ],
    ["an external $ref", { type: "object", properties: { a: { $ref: "https://example.com/a.json" } } }, /external/],
    ["a tuple", outputFormatOf(z.object({ pair: z.tuple([z.string(), z.number()]) })).jsonSchema, /tuple/],
    ["any value", outputFormatOf(z.object({ anything: z.unknown() })).jsonSchema, /without a type/],
    ["an enum of objects", { enum: [{ a: 1 }] }, /enum/],
  ])("%s is unsupported (the caller takes another strategy)", (_name, schema, reason) => {
    const subset = subsetSchemaOf(schema);
    expect(subset.ok).toBe(false);
    expect(!subset.ok && subset.reason).toMatch(reason);
  });

  it("leaves its input as it was", () => {
    const schema = { type: "object", properties: { a: { type: "integer", maximum: 3 } }, $defs: {} };
    const before = JSON.stringify(schema);
    reduced(schema);
    expect(JSON.stringify(schema)).toBe(before);
  });
});

const Tree: z.ZodType = z.lazy(() => z.object({ children: z.array(Tree) }));

// --- generators -------------------------------------------------------------------------------------------

/** A JSON schema, and whether it holds something the subset cannot loosen (then it must be unsupported). */
interface Generated {
  schema: Dict;
  unsupported: boolean;
}

const KEYS = ["a", "b", "c", "d"];
/** How a generated object says which keys it takes (the last three are open: unsupported). */
type Closing = "false" | "absent" | "true" | "record" | "patternProperties";
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const defined = (entries: Dict): Dict => Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined));

const leaf: fc.Arbitrary<Generated> = fc.oneof(
  fc
    .record({
      minLength: opt(fc.nat(3)),
      maxLength: opt(fc.integer({ min: 3, max: 8 })),
      pattern: opt(fc.constantFrom("^[a-z]*$", "b", "^.{0,4}$")),
      format: opt(fc.constantFrom("date", "email", "uuid", "regex", "color")),
    })
    .map((k) => ({ schema: defined({ type: "string", ...k }), unsupported: false })),
  fc
    .record({
      type: fc.constantFrom("integer", "number"),
      minimum: opt(fc.integer({ min: -10, max: 0 })),
      maximum: opt(fc.integer({ min: 0, max: 10 })),
      exclusiveMinimum: opt(fc.integer({ min: -12, max: -1 })),
      multipleOf: opt(fc.constantFrom(1, 2, 0.5)),
    })
    .map((k) => ({ schema: defined(k), unsupported: false })),
  fc.constantFrom<Generated>(
    { schema: { type: "boolean" }, unsupported: false },
    { schema: { type: "null" }, unsupported: false },
    { schema: { enum: ["x", "y", 1, null] }, unsupported: false },
    { schema: { type: "string", const: "x" }, unsupported: false },
    { schema: { type: ["string", "null"], maxLength: 2 }, unsupported: false },
  ),
);

const generated: fc.Arbitrary<Generated> = fc.letrec<{ node: Generated }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc
      .record({
        properties: fc.dictionary(fc.constantFrom(...KEYS), tie("node"), { maxKeys: 3 }),
        requiredMask: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        closing: fc.constantFrom<Closing>("false", "false", "absent", "true", "record", "patternProperties"),
        minProperties: opt(fc.nat(2)),
      })
      .map(({ properties, requiredMask, closing, minProperties }) => {
        const keys = Object.keys(properties);
        const open: Dict = {
          false: { additionalProperties: false },
          absent: {},
          true: { additionalProperties: true },
          record: { additionalProperties: { type: "number" } },
          patternProperties: { patternProperties: { "^x": { type: "string" } }, additionalProperties: false },
        }[closing] as Dict;
        return {
          schema: defined({
            type: "object",
            properties: Object.fromEntries(keys.map((k) => [k, properties[k].schema])),
            required: keys.filter((_, i) => requiredMask[i]),
            minProperties,
            ...open,
          }),
          unsupported:
            ["true", "record", "patternProperties"].includes(closing) || keys.some((k) => properties[k].unsupported),
        };
      }),
    fc
      .record({ items: tie("node"), minItems: opt(fc.nat(3)), maxItems: opt(fc.integer({ min: 3, max: 5 })) })
      .map(({ items, minItems, maxItems }) => ({
        schema: defined({ type: "array", items: items.schema, minItems, maxItems }),
        unsupported: items.unsupported,
      })),
    fc
      .record({
        key: fc.constantFrom("anyOf", "oneOf"),
        branches: fc.array(tie("node"), { minLength: 1, maxLength: 3 }),
      })
      .map(({ key, branches }) => ({
        schema: { [key]: branches.map((b) => b.schema) },
        unsupported: branches.some((b) => b.unsupported),
      })),
  ),
})).node;

/** The whole schema: as generated, or moved into `$defs` behind a `$ref` (sometimes one that refers to itself). */
const rootSchema: fc.Arbitrary<Generated> = fc.oneof(
  generated,
  fc.record({ inner: generated, recursive: fc.boolean() }).map(({ inner, recursive }) => ({
    schema: {
      type: "object",
      properties: { value: { $ref: "#/$defs/Inner" }, ...(recursive ? { again: { $ref: "#" } } : {}) },
      required: ["value"],
      additionalProperties: false,
      $defs: { Inner: inner.schema },
    },
    unsupported: inner.unsupported || recursive,
  })),
);

/** Values shaped like the schema (often valid, sometimes not: only the valid ones are used). */
function valuesFor(schema: unknown, root: Dict, depth = 0): fc.Arbitrary<unknown> {
  if (!isDict(schema) || depth > 6) return fc.constant(null);
  if (typeof schema.$ref === "string") {
    const target = schema.$ref === "#" ? root : (root.$defs as Dict)?.[schema.$ref.replace("#/$defs/", "")];
    return valuesFor(target, root, depth + 1);
  }
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const union = (schema.anyOf ?? schema.oneOf) as unknown[] | undefined;
  if (union) return fc.oneof(...union.map((b) => valuesFor(b, root, depth + 1)));
  if (Array.isArray(schema.type))
    return fc.oneof(...schema.type.map((t) => valuesFor({ ...schema, type: t }, root, depth)));
  switch (schema.type) {
    case "string":
      return fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("abc", "b", "2024-05-01", "a@b.co", "", "x"));
    case "integer":
      return fc.integer({ min: -12, max: 12 });
    case "number":
      return fc.oneof(fc.integer({ min: -12, max: 12 }), fc.constantFrom(0.5, -1.5, 2.25));
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(valuesFor(schema.items, root, depth + 1), { maxLength: 4 });
    case "object": {
      const properties = (schema.properties ?? {}) as Dict;
      const shape = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, valuesFor(v, root, depth + 1)]));
      const base = fc.record(shape, { requiredKeys: (schema.required as string[]) ?? [] });
      // Keys the schema does not name only where it is explicitly open (absent reads as closed: see the module).
      const open = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
      const extra = open || schema.patternProperties ? fc.constantFrom({}, { x1: 1 }, { xy: "s" }) : fc.constant({});
      return fc.tuple(base, extra).map(([value, more]) => ({ ...more, ...value }));
    }
    default:
      return fc.constant(null);
  }
}

describe("subsetSchemaOf: properties (fast-check)", () => {
  it("JSON schemas: unsupported exactly when they hold what cannot be loosened; else inside the stub's subset and looser", () => {
    let validValues = 0;
    fc.assert(
      fc.property(
        rootSchema.chain((g) =>
          fc.tuple(fc.constant(g), fc.array(valuesFor(g.schema, g.schema), { minLength: 1, maxLength: 6 })),
        ),
        ([{ schema, unsupported }, values]) => {
          const subset = subsetSchemaOf(schema);
          expect(subset.ok).toBe(!unsupported);
          if (!subset.ok) return;
          expect(schemaSubsetViolation(subset.schema)).toBeUndefined();
          for (const value of values) {
            if (!accepts(closedAsRead(schema) as Dict, value)) continue;
            validValues++;
            expect(accepts(subset.schema, value)).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(validValues).toBeGreaterThan(100);
  });

  const zodLeaf = fc.oneof(
    fc
      .record({ min: opt(fc.nat(2)), max: opt(fc.integer({ min: 2, max: 6 })), email: fc.boolean() })
      .map(({ min, max, email }) => {
        let s = email ? z.email() : z.string();
        if (min !== undefined) s = s.min(min);
        if (max !== undefined) s = s.max(max);
        return { zod: s as z.ZodType, unsupported: false };
      }),
    fc
      .record({ int: fc.boolean(), min: opt(fc.integer({ min: -5, max: 0 })), max: opt(fc.nat(5)) })
      .map(({ int, min, max }) => {
        let n = int ? z.int() : z.number();
        if (min !== undefined) n = n.min(min);
        if (max !== undefined) n = n.max(max);
        return { zod: n as z.ZodType, unsupported: false };
      }),
    fc.constantFrom(
      { zod: z.boolean() as z.ZodType, unsupported: false },
      { zod: z.enum(["sunny", "rain"]) as z.ZodType, unsupported: false },
      { zod: z.literal("x") as z.ZodType, unsupported: false },
      { zod: z.record(z.string(), z.number()) as z.ZodType, unsupported: true },
      { zod: Tree, unsupported: true },
    ),
  );
  const zodSchema = fc.letrec<{ node: { zod: z.ZodType; unsupported: boolean } }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      zodLeaf,
      fc
        .record({
          fields: fc.dictionary(
            fc.constantFrom(...KEYS),
            fc.record({ inner: tie("node"), wrap: fc.constantFrom("", "optional", "nullable") }),
            { maxKeys: 3 },
          ),
        })
        .map(({ fields }) => {
          const shape = Object.fromEntries(
            Object.entries(fields).map(([k, { inner, wrap }]) => [
              k,
              wrap === "optional" ? inner.zod.optional() : wrap === "nullable" ? inner.zod.nullable() : inner.zod,
            ]),
          );
          return {
            zod: z.object(shape) as z.ZodType,
            unsupported: Object.values(fields).some((f) => f.inner.unsupported),
          };
        }),
      fc
        .record({ items: tie("node"), min: opt(fc.nat(3)), max: opt(fc.integer({ min: 3, max: 5 })) })
        .map(({ items, min, max }) => {
          let a = z.array(items.zod);
          if (min !== undefined) a = a.min(min);
          if (max !== undefined) a = a.max(max);
          return { zod: a as z.ZodType, unsupported: items.unsupported };
        }),
      fc.array(tie("node"), { minLength: 2, maxLength: 3 }).map((options) => ({
        zod: z.union(options.map((o) => o.zod) as [z.ZodType, z.ZodType]) as z.ZodType,
        unsupported: options.some((o) => o.unsupported),
      })),
    ),
  })).node;

  it("zod schemas: the same, with the zod schema itself as the full check", async () => {
    let validValues = 0;
    await fc.assert(
      fc.asyncProperty(
        zodSchema.chain((g) => {
          const format = outputFormatOf(g.zod);
          const values = fc.array(valuesFor(format.jsonSchema, format.jsonSchema), { minLength: 1, maxLength: 6 });
          return fc.tuple(fc.constant({ ...g, format }), values);
        }),
        async ([{ format, unsupported }, values]) => {
          const subset = subsetSchemaOf(format.jsonSchema);
          expect(subset.ok).toBe(!unsupported);
          if (!subset.ok) return;
          expect(schemaSubsetViolation(subset.schema)).toBeUndefined();
          for (const value of values) {
            const parsed = await format.validate(value);
            if (!parsed.ok) continue;
            validValues++;
            // zod's object strips keys it does not name: a union can accept a value through a branch that drops
            // them, so the value zod accepts is the one it outputs (what the answer becomes).
            expect(accepts(subset.schema, parsed.value)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
    expect(validValues).toBeGreaterThan(50);
  });
});
