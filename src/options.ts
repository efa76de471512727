/**
 * The one way options are declared and checked. A surface declares its options as a table, key to
 * {@link OptionKind} (built from the shared pieces below: `fn`, `flag`, `name`, `count`, `oneOf`, ...), and
 * `readOptions` checks them once, when the surface is built: each set option of its kind, or a
 * {@link ToolCallRepairInputError} naming the option and what it accepts (`fn: options.key is <value>; expected
 * <accepted>`). Only own keys count (a prototype never answers for an option). What cannot be read at all (a
 * getter that throws) is left to the entry's boundary.
 *
 * Why a table, not a zod schema: the engine's options are read on the main entry, which must need nothing but
 * `@langchain/core` (zod is an optional peer here, and reaching it through core's own dependency breaks under
 * strict installs such as pnpm's), and the errors keep this package's wording, which a zod issue list would
 * have to be translated into anyway.
 */
import { boundary, expectedInput, optionsInput, ToolCallRepairInputError } from "./errors";
import { didYouMean, nonEmptyString, type Dict } from "./values";

/** What one option accepts: a test and the words for it. */
export interface OptionKind {
  accepts: (value: unknown) => boolean;
  expected: string;
  /** The values a `oneOf` option takes: a string near one of them is answered with "did you mean". */
  values?: readonly string[];
}

export const kind = (expected: string, accepts: (value: unknown) => boolean): OptionKind => ({ accepts, expected });

/** The shared pieces every surface declares its options with. */
export const option = {
  fn: kind("a function", (v) => typeof v === "function"),
  flag: kind("a boolean", (v) => typeof v === "boolean"),
  string: kind("a string", (v) => typeof v === "string"),
  name: kind("a non-empty string", (v) => typeof v === "string" && v !== ""),
  object: (expected: string) => kind(expected, (v) => typeof v === "object" && v !== null),
  count: kind("a finite number >= 0", (v) => Number.isFinite(v) && (v as number) >= 0),
  names: kind("an array of non-empty strings", (v) => Array.isArray(v) && v.every(nonEmptyString)),
  /** One of `values`, listed as `expected` says (default: `a, b, c`). */
  oneOf: (values: readonly string[], expected = `one of ${values.join(", ")}`) => ({
    ...kind(expected, (v) => values.includes(v as string)),
    values,
  }),
} as const;

/** A table of options: each key's kind. */
export type OptionTable = Readonly<Record<string, OptionKind>>;

/** Reporting callbacks, which every surface takes. */
export const REPORTING = { onRepair: option.fn, onError: option.fn };

/**
 * `options` (undefined and null are `{}`; anything else that is not an object is refused) checked against
 * `table`: the set options of the table, copied.
 */
export function readOptions<T extends object>(options: unknown, fn: string, table: OptionTable, argument = "options") {
  const record = optionsInput(options, fn, argument);
  const keys = Object.keys(record);
  // A key the table does not declare: a typo would otherwise be ignored and its option silently left at its default.
  const unknown = keys.find((key) => !Object.hasOwn(table, key));
  if (unknown !== undefined) {
    const known = Object.keys(table);
    throw new ToolCallRepairInputError(
      `${fn}: ${argument}.${unknown} is not an option${didYouMean(unknown, known)}; its options are ${known.join(", ")}`,
      { argument: `${argument}.${unknown}` },
    );
  }
  const out: Dict = {};
  for (const key of keys) {
    const value = record[key];
    if (value === undefined) continue;
    const { accepts, expected, values } = table[key];
    if (!accepts(value)) {
      const near = typeof value === "string" && values ? didYouMean(value, values, '"') : "";
      throw expectedInput(fn, `${argument}.${key}`, expected, value, near);
    }
    out[key] = value;
  }
  return out as T;
}

/** A public surface named `fn`, behind its boundary: `build` handed its options read against `table` ({@link readOptions}). */
export const surface = <O extends object, R>(fn: string, table: OptionTable, build: (options: O) => R) =>
  boundary(fn, (options?: O) => build(readOptions<O>(options, fn, table)));
