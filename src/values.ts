/**
 * Reading untrusted values: the one definition of a plain record, a JSON rendering that survives cycles,
 * throwing getters and huge values, and short descriptions for error messages. Every layer uses these
 * instead of `JSON.stringify` or `String()`, which throw on cycles, BigInts and symbols.
 */

/** A plain record: what this package reads and returns for call options, request fields and other open objects. */
export type Dict = Record<string, unknown>;

/** `value` when it is a non-empty string, else undefined. */
export const nonEmptyString = (value: unknown) => (typeof value === "string" && value ? value : undefined);

/** `text` cut at `max` characters (ending in `…` when cut). */
export const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/** `key:value` pairs, space separated, as a lookup that answers only for its own keys. */
export const lookupOf = <V extends string>(pairs: string): ReadonlyMap<unknown, V> =>
  new Map(pairs.split(" ").map((pair) => pair.split(":") as [string, V]));

/** A plain record (not null, not an array). */
export const isDict = (value: unknown): value is Dict => !!value && typeof value === "object" && !Array.isArray(value);

/**
 * A record's fields, or none (frozen: to read, never to keep): `fieldsOf(x).key` reads like a plain field at each
 * site (a shared keyed read is slow).
 */
export const fieldsOf = (value: unknown) => (isDict(value) ? value : NO_FIELDS);
const NO_FIELDS: Dict = Object.freeze({});

/**
 * JSON text of `value`, or a stand-in where JSON cannot say it: a cycle becomes `"[Circular]"`, a BigInt
 * its digits, a symbol or function its description, a value whose getter throws `"[Unreadable]"`. Output
 * stops growing past `maxLength` characters (ending in `…`), so the cost is bounded by the budget, not the
 * value.
 */
export function safeJson(value: unknown, maxLength = 100_000) {
  let out = "";
  const stack: unknown[] = [];
  const emit = (text: string) => {
    if (out.length >= maxLength) return false;
    out += clip(text, maxLength - out.length);
    return out.length < maxLength;
  };
  const write = (v: unknown) => {
    // JSON writes a non-finite number as null
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return emit(JSON.stringify(v));
    if (typeof v === "bigint") return emit(String(v));
    if (typeof v === "symbol") return emit(JSON.stringify(v.description ?? "symbol"));
    if (typeof v === "function") return emit('"[Function]"');
    if (v == null) return emit("null");
    if (stack.includes(v)) return emit('"[Circular]"'); // depth is small; a cycle is what this guards
    if (stack.length > 64) return emit('"[Deep]"');
    stack.push(v);
    try {
      if (Array.isArray(v)) {
        let ok = emit("[");
        for (let i = 0; ok && i < v.length; i++) ok = (i === 0 || emit(",")) && write(v[i]);
        return ok && emit("]");
      }
      const toJSON = (v as Dict).toJSON;
      if (typeof toJSON === "function") return write(toJSON.call(v));
      if (!emit("{")) return false;
      let first = true;
      for (const key of Object.keys(v)) {
        const item = (v as Dict)[key];
        if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
        if (!(first || emit(",")) || !emit(`${JSON.stringify(key)}:`) || !write(item)) return false;
        first = false;
      }
      return emit("}");
    } catch {
      return emit('"[Unreadable]"');
    } finally {
      stack.pop();
    }
  };
  write(value);
  return out;
}

/** A short description of a value for an error message (never its content, which may be large or private). */
export function describeValue(value: unknown) {
  if (value == null) return String(value);
  if (typeof value !== "object")
    return typeof value === "string" ? `a string of ${value.length} characters` : `a ${typeof value}`;
  try {
    if (Array.isArray(value)) return `an array of ${value.length}`;
    const keys = Object.keys(value).slice(0, 6);
    return keys.length ? `an object with keys {${keys.join(", ")}}` : "an empty object";
  } catch {
    return "an unreadable object";
  }
}

/**
 * A short, safe rendering of a value for a message (never throws): strings quoted and cut, a small plain object of
 * at most 6 own data properties holding numbers, booleans, null, undefined or strings shown as written
 * (`{index: 3, count: 2}`: its keys alone would hide what is wrong) when that fits in 60 characters, everything else
 * described. Reads no getter; a string is cut at 60 characters.
 */
export function quoteValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(clip(value, 60));
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  try {
    const proto = isDict(value) && Object.getPrototypeOf(value);
    const entries =
      proto === Object.prototype || proto === null ? Object.entries(Object.getOwnPropertyDescriptors(value)) : [];
    const parts = entries.map(([key, { value: v, enumerable, writable }]) =>
      enumerable &&
      writable !== undefined &&
      (v === null || ["undefined", "number", "boolean", "string"].includes(typeof v))
        ? `${/^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key)}: ${quoteValue(v)}`
        : "",
    );
    const text = `{${parts.join(", ")}}`;
    if (parts.length && parts.length <= 6 && !parts.includes("") && text.length <= 60) return text;
  } catch {
    // a proxy that refuses to be read is described instead
  }
  return describeValue(value);
}

/** The name in `names` closest to `name` by edit distance, when it is close enough to be a typo of it. */
export function nearestName(name: string, names: readonly string[]) {
  let best: string | undefined;
  let bestDistance = 3; // a typo is at most 2 edits away
  for (const candidate of names) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance && distance * 2 < candidate.length) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** ` (did you mean X?)`, X between `before` and `after`, when `name` is a typo of one of `names`; else "". */
export const didYouMean = (name = "", names: readonly string[], before = "", after = before) => {
  const near = nearestName(name, names);
  return near ? ` (did you mean ${before}${near}${after}?)` : "";
};

/** Levenshtein distance (insertions, deletions, substitutions), one row at a time. */
function editDistance(a: string, b: string) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}
