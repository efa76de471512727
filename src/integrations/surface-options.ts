/**
 * Every surface declares its full option table: its own options, the reporting callbacks and the engine's options
 * it passes on (`level` excepted: each surface decides its own). Checked once when the surface is built, so a
 * typo fails at start-up naming the surface and its nearest option, not silently at the first model call.
 */
import { ENGINE_OPTIONS } from "../engine";
import { type OptionKind, type OptionTable, REPORTING } from "../options";

const { level: _decidedBySurface, ...passedOn } = ENGINE_OPTIONS;
const { trailing: _keptForResume, ...passedToStore } = passedOn;

/** The options every surface that repairs requests or state takes (the engine's, but `level`, and reporting). */
export const SURFACE_OPTIONS: OptionTable = { ...passedOn, ...REPORTING };
/** The options of a surface that repairs stored threads (which decides `trailing` too). */
export const STORED_SURFACE_OPTIONS: OptionTable = { ...passedToStore, ...REPORTING };
/** Any value: what the surface only hands on (a model it reads the provider of). */
export const anything = (expected: string): OptionKind => ({ expected, accepts: () => true });
