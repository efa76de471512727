/**
 * Every surface declares its full option table: its own options, the reporting callbacks and the engine's options
 * it passes on (`level` excepted: each surface decides its own). Checked once when the surface is built, so a
 * typo fails at start-up naming the surface and its nearest option, not silently at the first model call.
 */
import { createRepairer, ENGINE_OPTIONS, type Repairer } from "../engine";
import { requestTargetOf } from "../models/request-target";
import type { ProviderRejection, RepairOptions } from "../types";
import { requestLessons } from "../recovery/force-repair";
import { threadOf } from "./events";
import { type OptionTable, REPORTING } from "../options";

const { level: _decidedBySurface, ...passedOn } = ENGINE_OPTIONS;

/** The options every surface that repairs requests or state takes (the engine's, but `level`, and reporting). */
export const SURFACE_OPTIONS = { ...passedOn, ...REPORTING };
const { trailing: _keptForResume, toolsInRequest: _requestShaping, ...passedToStore } = SURFACE_OPTIONS;
/** The options of a surface that repairs stored threads (which decides `trailing` too, and shapes no request). */
export const STORED_SURFACE_OPTIONS = passedToStore;

/** The options of `given` that `table` declares: what a setup hands one of its pieces. */
export const only = <T extends object>(given: T, table: OptionTable) =>
  Object.fromEntries(Object.entries(given).filter(([key]) => Object.hasOwn(table, key))) as Partial<T>;

/**
 * A surface's repairers, from its engine options and reporting callbacks (`onRepair` is not passed on: surfaces
 * report what these repairers return). For requests, whichever model a surface sees: an explicit `provider`
 * option wins, otherwise the model tells (ChatBedrockConverse means Bedrock, and so on), and `"strict"` when it
 * cannot. One repairer per target and per answer to "does this request carry tools", built once and reused.
 */
export function repairersOf(input: Omit<RepairOptions, "level"> & { onError?: unknown }) {
  const { onRepair: _r, onError: _e, ...options } = input;
  const byKey = new Map<string, Repairer>();
  const lessons = requestLessons();
  return {
    /** The structural repairer: what a surface stores. */
    structural: () => createRepairer({ ...options, level: "structural" }),
    /**
     * The repairer for requests to `model` (any wrapper of a chat model, or undefined); `toolsInRequest` false
     * when the surface is sure the request carries no tools (`noTools`; only without an explicit option, which
     * wins); what a rejection taught about the run's thread (`requestLessons`) over both.
     */
    for(model: unknown, noTools?: boolean) {
      const lesson = lessons.of(threadOf()) ?? {};
      const target = options.provider ? {} : requestTargetOf(model);
      const provider = lesson.provider ?? options.provider ?? target.provider ?? "strict";
      const systemMessages = lesson.systemMessages ?? options.systemMessages ?? target.systemMessages;
      const toolsInRequest = lesson.toolsInRequest ?? options.toolsInRequest ?? (noTools ? false : undefined);
      const key = `${provider}\0${systemMessages}\0${toolsInRequest}`;
      const repairer =
        byKey.get(key) ?? createRepairer({ ...options, level: "request", provider, systemMessages, toolsInRequest });
      byKey.set(key, repairer);
      return repairer;
    },
    /** Options of a retry: shaped for the same target as `repairer`'s requests (provider, system messages, tools). */
    recovery: ({ options: { provider, systemMessages, toolsInRequest } }: Repairer) => ({
      ...options,
      provider,
      systemMessages,
      toolsInRequest,
    }),
    /** Learns, for the run's thread, what cured a rejection of a request `repairer` made. */
    learn: (rejection: ProviderRejection, { options }: Repairer) => lessons.learn(threadOf(), rejection, options),
  };
}
