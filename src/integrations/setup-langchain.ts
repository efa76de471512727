/**
 * `toolCallRepair(options)`: what a langchain `createAgent` agent needs, from one set of options. The middleware
 * repairs every model request for the model's provider, repairs the stored thread (structurally) when a new input
 * arrives and recovers from a provider's rejection; the checkpointer wrapper keeps the finished results of
 * sibling tools that a new input would throw away, which no middleware can see.
 */
import { boundary } from "../errors";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { withToolCallRepair, type CheckpointerRepairOptions } from "./checkpointer";
import { reportedOnce } from "./events";
import { MIDDLEWARE_OPTIONS, toolCallRepairMiddleware, type ToolCallRepairMiddlewareOptions } from "./middleware";
import { option, readOptions } from "../options";

export interface ToolCallRepairOptions
  extends ToolCallRepairMiddlewareOptions,
    Pick<CheckpointerRepairOptions, "list"> {}

export interface ToolCallRepairSetup {
  /** For `createAgent({ middleware: [...] })`. */
  middleware: ReturnType<typeof toolCallRepairMiddleware>;
  /** Wraps the agent's checkpointer (`createAgent({ checkpointer: repair.checkpointer(saver) })`). */
  checkpointer<T extends BaseCheckpointSaver>(saver: T): T;
}

const SETUP_OPTIONS = { ...MIDDLEWARE_OPTIONS, list: option.flag };

/**
 * The recommended setup for `createAgent`:
 *
 * ```ts
 * const repair = toolCallRepair({ onRepair: (r) => log.info(r) });
 * const agent = createAgent({ model, tools, middleware: [repair.middleware], checkpointer: repair.checkpointer(saver) });
 * ```
 * Options are validated here; a repair of a call reaches `onRepair` once per thread, whichever piece made it (the
 * request's placeholder and the stored one are one repair).
 */
export const toolCallRepair = boundary(
  "toolCallRepair",
  function toolCallRepair(options: ToolCallRepairOptions = {}): ToolCallRepairSetup {
    const { list, repairOnInput, repairModelRequest, recoverRejections, name, onRepair, trailing, ...rest } =
      readOptions<ToolCallRepairOptions>(options, "toolCallRepair", SETUP_OPTIONS);
    const shared = { ...rest, onRepair: reportedOnce(onRepair) };
    const middleware = toolCallRepairMiddleware({
      ...shared,
      trailing,
      repairOnInput,
      repairModelRequest,
      recoverRejections,
      name,
    });
    return {
      middleware,
      checkpointer: (saver) => withToolCallRepair(saver, { ...shared, list }),
    };
  },
);
