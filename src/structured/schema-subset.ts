/**
 * A JSON schema reduced to the subset that constrained decoding takes (Bedrock Converse `outputConfig`, Anthropic
 * `output_config.format`: AWS "Get validated JSON results from models", Anthropic "JSON Schema limitations").
 *
 * The reduced schema accepts every value the user's schema accepts (it only loosens), so constrained decoding
 * never rules out a valid answer; the answer is then validated on the client against the FULL schema, with the
 * corrective call when it fails. What the subset lacks moves into `description` the way Anthropic's SDKs do it
 * (`transformJSONSchema` / `transform_schema`: `{minimum: 1, maximum: 5}` appended to the description), so the
 * model still reads it. What cannot be loosened without opening an object or refusing valid values (a record or
 * other open object, a recursive or external `$ref`, a tuple, an untyped "any value") makes the schema
 * unsupported: the caller then uses another strategy.
 *
 * Kept per node: `type` (one name; a list becomes `anyOf`), `title`, `description`, `enum` / `const` of scalars,
 * `anyOf` (`oneOf` becomes `anyOf`, which is looser), object `properties` / `required` with
 * `additionalProperties: false`, array `items` and `minItems` 0 or 1, string `format` of the supported ones.
 * Internal `$ref`s are inlined. `pattern` is moved too, as the SDKs do: the regex dialect the subset takes is
 * narrower than JSON Schema's, and the client check enforces it anyway. A schema over the compilation limits
 * (more than 16 union-typed or 24 optional properties, `$ref`s counted where used) is unsupported too: Bedrock
 * refuses it although every keyword is in the subset.
 */
import { isDict, safeJson, type Dict } from "../values";

export type SubsetSchema = { ok: true; schema: Dict } | { ok: false; reason: string };

/** String formats in the subset (the same list in AWS's and Anthropic's docs). */
export const SUBSET_STRING_FORMATS: ReadonlySet<string> = new Set(
  "date-time time date duration email hostname uri ipv4 ipv6 uuid".split(" "),
);

const SCALAR_TYPES = new Set(["string", "number", "integer", "boolean", "null"]);
/** Say nothing to the model: dropped. */
const DROPPED = new Set(["$schema", "$id", "$comment", "$defs", "definitions"]);
/** Change which values are valid in ways the subset cannot loosen. */
const UNSUPPORTED: Record<string, string> = {
  patternProperties: "an object with patternProperties (open to more keys)",
  propertyNames: "an object with propertyNames (a record)",
  unevaluatedProperties: "unevaluatedProperties",
  prefixItems: "a tuple (prefixItems)",
  $anchor: "$anchor",
  $dynamicRef: "a dynamic $ref",
  $dynamicAnchor: "$dynamicAnchor",
  $recursiveRef: "a recursive $ref",
  allOf: "allOf (an intersection of closed objects refuses every value)",
};
/** Nesting past this is refused (a generated schema this deep is no answer format). */
const MAX_DEPTH = 64;
/** Nodes written at most: inlining a `$ref` used many times over can grow a small schema exponentially. */
const MAX_NODES = 10_000;
/**
 * Anthropic's complexity limits for constrained decoding (its "Structured outputs" docs; Bedrock runs the same
 * compiler): `anyOf` or type-list nodes, and properties not in `required`, counted over the whole schema.
 * Over them the request is refused ("Schemas contains too many parameters with union types ... limit: 16";
 * "The compiled grammar is too large ..." past 24 optional properties).
 */
const MAX_UNIONS = 16;
const MAX_OPTIONAL = 24;

class Unsupported extends Error {}

/** The schema in the subset, or why it cannot be (see the module comment). Pure: the input is not changed. */
export function subsetSchemaOf(schema: Dict): SubsetSchema {
  try {
    const counts = { nodes: 0, unions: 0, optional: 0 };
    const subset = toSubset(schema, { root: schema, refs: [], counts }, 0);
    if (counts.unions > MAX_UNIONS) {
      return {
        ok: false,
        reason: `more than ${MAX_UNIONS} properties with union types (anyOf or a type list: ${counts.unions})`,
      };
    }
    if (counts.optional > MAX_OPTIONAL)
      return { ok: false, reason: `more than ${MAX_OPTIONAL} optional properties (${counts.optional})` };
    return { ok: true, schema: subset };
  } catch (error) {
    if (error instanceof Unsupported) return { ok: false, reason: error.message };
    throw error;
  }
}

interface Walk {
  root: Dict;
  /** The `$ref`s being inlined, outermost first: one met again is a recursive schema. */
  refs: string[];
  /** Nodes, union nodes and optional properties written so far (shared by the whole walk). */
  counts: { nodes: number; unions: number; optional: number };
}

function toSubset(node: unknown, walk: Walk, depth: number): Dict {
  if (depth > MAX_DEPTH) throw new Unsupported(`a schema nested deeper than ${MAX_DEPTH} levels`);
  if (++walk.counts.nodes > MAX_NODES)
    throw new Unsupported(`a schema of more than ${MAX_NODES} nodes once its $refs are inlined`);
  if (
    node === true ||
    (isDict(node) && Object.keys(node).every((k) => DROPPED.has(k) || k === "title" || k === "description"))
  ) {
    throw new Unsupported("a schema without a type (any value)");
  }
  if (!isDict(node)) throw new Unsupported(`a schema that is ${node === false ? "false (no value)" : "not an object"}`);
  if (typeof node.$ref === "string") return inlinedRef(node, walk, depth);
  for (const key of Object.keys(node)) if (key in UNSUPPORTED) throw new Unsupported(UNSUPPORTED[key]);
  if (Array.isArray(node.type)) return typeListAsAnyOf(node, walk, depth);
  if (Array.isArray(node.anyOf) || Array.isArray(node.oneOf)) return unionOf(node, walk, depth);

  const out: Dict = {};
  const { rest, take } = remainder(node);
  const type = take("type");
  if (type !== undefined) {
    if (typeof type !== "string" || !(SCALAR_TYPES.has(type) || type === "object" || type === "array")) {
      throw new Unsupported(`the type ${JSON.stringify(type)}`);
    }
    out.type = type;
  }
  keepAnnotations(rest, out, take);
  if ("enum" in rest) {
    const values = take("enum");
    if (!Array.isArray(values) || !values.every(isScalar))
      throw new Unsupported("an enum of values that are not all scalars");
    out.enum = values;
  }
  if ("const" in rest) {
    const value = take("const");
    if (!isScalar(value)) throw new Unsupported("a const that is not a scalar");
    out.const = value;
  }
  if (type === undefined && !("enum" in out) && !("const" in out))
    throw new Unsupported("a schema without a type (any value)");
  if (type === "object") objectPart(out, take, walk, depth);
  else if (type === "array") arrayPart(rest, out, take, walk, depth);
  else if (type === "string") {
    const format = rest.format;
    if (typeof format === "string" && SUBSET_STRING_FORMATS.has(format)) out.format = take("format");
  }
  return withMoved(out, rest);
}

function objectPart(out: Dict, take: (key: string) => unknown, walk: Walk, depth: number): void {
  const additional = take("additionalProperties");
  // Absent reads as closed, as every structured-output SDK reads it: the schema names the keys it wants.
  if (additional !== undefined && additional !== false) {
    const isRecord = isDict(additional) && Object.keys(additional).length > 0;
    throw new Unsupported(
      isRecord ? "a record (additionalProperties is a schema)" : "an open object (additionalProperties is not false)",
    );
  }
  const properties = take("properties") ?? {};
  if (!isDict(properties)) throw new Unsupported("properties that are not an object");
  out.properties = Object.fromEntries(
    Object.entries(properties).map(([key, value]) => [key, toSubset(value, walk, depth + 1)]),
  );
  const required = take("required");
  if (required !== undefined) {
    if (!Array.isArray(required) || !required.every((key) => typeof key === "string" && key in properties)) {
      throw new Unsupported("required names a property the object does not define");
    }
    out.required = required;
  }
  walk.counts.optional += Object.keys(properties).filter(
    (key) => !(required as string[] | undefined)?.includes(key),
  ).length;
  out.additionalProperties = false;
}

function arrayPart(rest: Dict, out: Dict, take: (key: string) => unknown, walk: Walk, depth: number): void {
  const items = take("items");
  if (!isDict(items)) {
    throw new Unsupported(
      items === undefined ? "an array without items (any value)" : "an array whose items is not one schema",
    );
  }
  out.items = toSubset(items, walk, depth + 1);
  if (rest.minItems === 0 || rest.minItems === 1) out.minItems = take("minItems");
}

/** A copy of `node` without the keywords that say nothing, and `take`: a keyword's value, removed from the copy. */
function remainder(node: Dict): { rest: Dict; take: (key: string) => unknown } {
  const rest: Dict = { ...node };
  for (const key of DROPPED) delete rest[key];
  const take = (key: string): unknown => {
    const value = rest[key];
    delete rest[key];
    return value;
  };
  return { rest, take };
}

/** `title` and `description` as they are (a description that is not a string moves with the rest). */
function keepAnnotations(rest: Dict, out: Dict, take: (key: string) => unknown): void {
  for (const key of ["title", "description"]) if (typeof rest[key] === "string") out[key] = take(key);
}

/**
 * What the subset lacks, appended to the description the way Anthropic's SDKs write it:
 * `{minimum: 1, maximum: 5}` after a blank line.
 */
function withMoved(out: Dict, moved: Dict): Dict {
  const entries = Object.entries(moved);
  if (entries.length === 0) return out;
  const text = `{${entries.map(([key, value]) => `${key}: ${safeJson(value)}`).join(", ")}}`;
  return {
    ...out,
    description: typeof out.description === "string" && out.description !== "" ? `${out.description}\n\n${text}` : text,
  };
}

/** Keywords that apply to values of some types only (JSON Schema's validation vocabulary); the rest apply to all. */
const TYPES_OF_KEYWORD: Record<string, readonly string[]> = Object.fromEntries(
  (
    [
      [
        ["object"],
        "properties required additionalProperties patternProperties propertyNames minProperties maxProperties " +
          "dependentRequired dependentSchemas unevaluatedProperties",
      ],
      [
        ["array"],
        "items prefixItems additionalItems unevaluatedItems contains minContains maxContains minItems maxItems uniqueItems",
      ],
      [["string"], "minLength maxLength pattern format contentEncoding contentMediaType"],
      [["number", "integer"], "minimum maximum exclusiveMinimum exclusiveMaximum multipleOf"],
    ] as const
  ).flatMap(([types, keywords]) => keywords.split(" ").map((keyword) => [keyword, types])),
);

/**
 * `{ type: [a, b], ...k }` is `{ anyOf: [{ type: a, ...k }, { type: b, ...k }] }` (title and description on top),
 * each branch with only the keywords that apply to its type (the others accept every value of it): a nullable
 * object's null branch is `{ type: "null" }`, not its properties moved into a description.
 */
function typeListAsAnyOf(node: Dict, walk: Walk, depth: number): Dict {
  const { type, title, description, ...shared } = node;
  const types = type as unknown[];
  if (types.length === 1) return toSubset({ ...node, type: types[0] }, walk, depth);
  walk.counts.unions++;
  const appliesTo = (key: string, t: unknown) =>
    !Object.hasOwn(TYPES_OF_KEYWORD, key) || TYPES_OF_KEYWORD[key].includes(t as string);
  const branchOf = (t: unknown): Dict => ({
    ...Object.fromEntries(Object.entries(shared).filter(([key]) => appliesTo(key, t))),
    type: t,
  });
  const out: Dict = { anyOf: types.map((t) => toSubset(branchOf(t), walk, depth + 1)) };
  if (typeof title === "string") out.title = title;
  if (typeof description === "string") out.description = description;
  return out;
}

function unionOf(node: Dict, walk: Walk, depth: number): Dict {
  const { anyOf, oneOf, ...rest } = node;
  if (Array.isArray(anyOf) && Array.isArray(oneOf)) throw new Unsupported("anyOf and oneOf on one schema");
  for (const key of ["type", "properties", "items", "enum", "const"]) {
    if (key in rest) throw new Unsupported(`${key} next to anyOf / oneOf`);
  }
  const branches = (anyOf ?? oneOf) as unknown[];
  if (branches.length === 0) throw new Unsupported("an empty anyOf / oneOf");
  walk.counts.unions++;
  const out: Dict = { anyOf: branches.map((branch) => toSubset(branch, walk, depth + 1)) };
  const left = remainder(rest);
  keepAnnotations(left.rest, out, left.take);
  return withMoved(out, left.rest);
}

/** An internal `$ref` replaced by what it points at (its siblings kept over it); external or recursive ones are refused. */
function inlinedRef(node: Dict, walk: Walk, depth: number): Dict {
  const { $ref, ...siblings } = node;
  const ref = $ref as string;
  if (!ref.startsWith("#")) throw new Unsupported(`an external $ref (${ref})`);
  if (walk.refs.includes(ref)) throw new Unsupported(`a recursive schema ($ref ${ref})`);
  let target: unknown = walk.root;
  for (const part of ref
    .slice(1)
    .split("/")
    .filter((p) => p !== "")) {
    const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
    target = isDict(target) ? target[key] : Array.isArray(target) ? target[Number(key)] : undefined;
  }
  if (target === undefined) throw new Unsupported(`a $ref that points at nothing (${ref})`);
  const merged = isDict(target) ? { ...target, ...siblings } : target;
  return toSubset(merged, { ...walk, refs: [...walk.refs, ref] }, depth + 1);
}

const isScalar = (value: unknown): boolean => value === null || ["string", "number", "boolean"].includes(typeof value);
