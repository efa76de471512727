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

type SubsetSchema = { ok: true; schema: Dict } | { ok: false; reason: string };

/** String formats in the subset (the same list in AWS's and Anthropic's docs). */
const FORMATS = new Set("date-time time date duration email hostname uri ipv4 ipv6 uuid".split(" "));
const TYPES = new Set("string number integer boolean null object array".split(" "));
/** Say nothing to the model: dropped. */
const DROPPED = "$schema $id $comment $defs definitions".split(" ");
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
function no(reason: string): never {
  throw new Unsupported(reason);
}

/**
 * One walk: the root (for `$ref`s), the `$ref`s being inlined, outermost first (one met again is a recursive
 * schema), and the nodes, union nodes and optional properties written so far.
 */
type Walk = { root: Dict; refs: string[]; nodes: number; unions: number; optional: number };

/** The schema in the subset, or why it cannot be (see the module comment). Pure: the input is not changed. */
export function subsetSchemaOf(schema: Dict): SubsetSchema {
  const walk: Walk = { root: schema, refs: [], nodes: 0, unions: 0, optional: 0 };
  try {
    const subset = toSubset(schema, walk, 0);
    if (walk.unions > MAX_UNIONS)
      no(`more than ${MAX_UNIONS} properties with union types (anyOf or a type list: ${walk.unions})`);
    if (walk.optional > MAX_OPTIONAL) no(`more than ${MAX_OPTIONAL} optional properties (${walk.optional})`);
    return { ok: true, schema: subset };
  } catch (error) {
    if (error instanceof Unsupported) return { ok: false, reason: error.message };
    throw error;
  }
}

/** Keywords that apply to values of some types only (JSON Schema's validation vocabulary); the rest apply to all. */
const TYPES_OF_KEYWORD = new Map<string, string[]>();
for (const [types, keywords] of [
  ["object", "properties required additionalProperties minProperties maxProperties dependentRequired dependentSchemas"],
  ["array", "items additionalItems unevaluatedItems contains minContains maxContains minItems maxItems uniqueItems"],
  ["string", "minLength maxLength pattern format contentEncoding contentMediaType"],
  ["number integer", "minimum maximum exclusiveMinimum exclusiveMaximum multipleOf"],
])
  for (const keyword of keywords.split(" ")) TYPES_OF_KEYWORD.set(keyword, types.split(" "));

function toSubset(node: unknown, walk: Walk, depth: number): Dict {
  const next = (child: unknown) => toSubset(child, walk, depth + 1);
  if (depth > MAX_DEPTH) no(`a schema nested deeper than ${MAX_DEPTH} levels`);
  if (++walk.nodes > MAX_NODES) no(`a schema of more than ${MAX_NODES} nodes once its $refs are inlined`);
  // `true` and `{}` (or a node with only a title and a description) take any value: refused below too.
  if (node === true) no("a schema without a type (any value)");
  if (!isDict(node)) no(`a schema that is ${node === false ? "false (no value)" : "not an object"}`);
  const { $ref, type, anyOf, oneOf } = node;
  if (typeof $ref === "string") {
    // An internal `$ref` replaced by what it points at (its siblings kept over it).
    const { $ref: _ref, ...siblings } = node;
    if (!$ref.startsWith("#")) no(`an external $ref (${$ref})`);
    if (walk.refs.includes($ref)) no(`a recursive schema ($ref ${$ref})`);
    let target: unknown = walk.root;
    for (const part of $ref.slice(1).split("/").filter(Boolean)) {
      const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
      target = isDict(target) ? target[key] : Array.isArray(target) ? target[Number(key)] : undefined;
    }
    if (target === undefined) no(`a $ref that points at nothing (${$ref})`);
    walk.refs.push($ref);
    const inlined = next(isDict(target) ? { ...target, ...siblings } : target);
    walk.refs.pop();
    return inlined;
  }
  for (const key of Object.keys(node)) if (key in UNSUPPORTED) no(UNSUPPORTED[key]);
  if (Array.isArray(type)) {
    if (type.length === 1) return toSubset({ ...node, type: type[0] }, walk, depth);
    // `{ type: [a, b], ...k }` is `{ anyOf: [{ type: a, ...k }, { type: b, ...k }] }` (title and description on
    // top), each branch with only the keywords that apply to its type (the others accept every value of it): a
    // nullable object's null branch is `{ type: "null" }`, not its properties moved into a description.
    const { title, description, ...shared } = node;
    const anyOf = type.map((t) => ({
      ...Object.fromEntries(Object.entries(shared).filter(([k]) => TYPES_OF_KEYWORD.get(k)?.includes(t) ?? true)),
      type: t,
    }));
    const top = Object.fromEntries(Object.entries({ title, description }).filter(([, v]) => typeof v === "string"));
    return toSubset({ ...top, anyOf }, walk, depth);
  }

  const out: Dict = {};
  const rest = { ...node };
  for (const key of DROPPED) delete rest[key];
  const take = (key: string) => {
    const value = rest[key];
    delete rest[key];
    return value;
  };
  if (Array.isArray(anyOf) || Array.isArray(oneOf)) {
    if (Array.isArray(anyOf) && Array.isArray(oneOf)) no("anyOf and oneOf on one schema");
    for (const key of "type properties items enum const".split(" "))
      if (key in rest) no(`${key} next to anyOf / oneOf`);
    take("anyOf");
    take("oneOf");
    const branches = (anyOf ?? oneOf) as unknown[];
    if (!branches.length) no("an empty anyOf / oneOf");
    walk.unions++;
    out.anyOf = branches.map(next);
  } else {
    take("type");
    if (type !== undefined) {
      if (typeof type !== "string" || !TYPES.has(type)) no(`the type ${JSON.stringify(type)}`);
      out.type = type;
    }
  }
  // `title` and `description` as they are (a description that is not a string moves with the rest).
  for (const key of ["title", "description"]) if (typeof rest[key] === "string") out[key] = take(key);
  if (out.anyOf) return withMoved(out, rest);
  if ("enum" in rest) {
    out.enum = take("enum");
    if (!Array.isArray(out.enum) || !out.enum.every(isScalar)) no("an enum of values that are not all scalars");
  }
  if ("const" in rest) {
    out.const = take("const");
    if (!isScalar(out.const)) no("a const that is not a scalar");
  }
  if (type === undefined && !("enum" in out) && !("const" in out)) no("a schema without a type (any value)");
  if (type === "object") {
    const additional = take("additionalProperties");
    // Absent reads as closed, as every structured-output SDK reads it: the schema names the keys it wants.
    if (additional !== undefined && additional !== false)
      no(
        isDict(additional) && Object.keys(additional).length
          ? "a record (additionalProperties is a schema)"
          : "an open object (additionalProperties is not false)",
      );
    const properties = take("properties") ?? {};
    if (!isDict(properties)) no("properties that are not an object");
    out.properties = Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, next(value)]));
    const required = take("required");
    if (required !== undefined) {
      if (!Array.isArray(required) || !required.every((key) => typeof key === "string" && key in properties))
        no("required names a property the object does not define");
      out.required = required;
    }
    walk.optional += Object.keys(properties).filter((key) => !(required as string[] | undefined)?.includes(key)).length;
    out.additionalProperties = false;
  } else if (type === "array") {
    const items = take("items");
    if (!isDict(items))
      no(items === undefined ? "an array without items (any value)" : "an array whose items is not one schema");
    out.items = next(items);
    if (rest.minItems === 0 || rest.minItems === 1) out.minItems = take("minItems");
  } else if (type === "string" && typeof rest.format === "string" && FORMATS.has(rest.format)) {
    out.format = take("format");
  }
  return withMoved(out, rest);
}

/**
 * What the subset lacks, appended to the description the way Anthropic's SDKs write it:
 * `{minimum: 1, maximum: 5}` after a blank line.
 */
function withMoved(out: Dict, moved: Dict) {
  const entries = Object.entries(moved);
  if (!entries.length) return out;
  const text = `{${entries.map(([key, value]) => `${key}: ${safeJson(value)}`).join(", ")}}`;
  return { ...out, description: out.description ? `${out.description}\n\n${text}` : text };
}

const isScalar = (value: unknown) => value === null || ["string", "number", "boolean"].includes(typeof value);
