/**
 * Every surface checks its own options when it is built (the engine's are checked by the engine): a callback
 * that is not a function, a switch that is not a boolean, an empty name fail at start-up, naming the option.
 */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ToolCallRepairInputError } from "../../src/errors";
import { withToolCallRepair } from "../../src/integrations/checkpointer";
import { toolCallRepairHook } from "../../src/integrations/hook";
import { toolCallRepairMiddleware } from "../../src/integrations/middleware";
import { withRequestRepair } from "../../src/integrations/model-wrapper";
import { toolCallRepairNode } from "../../src/integrations/node";
import { toolCallRepair } from "../../src/integrations/middleware";
import { toolCallRepairKit } from "../../src/integrations/node";
import { bedrockModel } from "../support/stubs";

const model = () => bedrockModel({ url: "http://127.0.0.1:9" });

const surfaces: [string, (options: Record<string, unknown>) => unknown, string[]][] = [
  ["toolCallRepairNode", (o) => toolCallRepairNode(o), []],
  ["toolCallRepairHook", (o) => toolCallRepairHook(o), ["persist", "shapeRequests"]],
  [
    "toolCallRepairMiddleware",
    (o) => toolCallRepairMiddleware(o),
    ["repairOnInput", "repairModelRequest", "recoverRejections"],
  ],
  ["withRequestRepair", (o) => withRequestRepair(model(), o), ["repairRequests", "recoverRejections"]],
  ["withToolCallRepair", (o) => withToolCallRepair(new MemorySaver(), o), []],
  ["toolCallRepair", (o) => toolCallRepair(o), ["repairOnInput"]],
  ["toolCallRepairKit", (o) => toolCallRepairKit(o), ["repairRequests", "recoverRejections"]],
];

describe("surface options are checked when the surface is built", () => {
  it.each(surfaces)("%s: onRepair and onError must be functions", (name, build) => {
    for (const key of ["onRepair", "onError"]) {
      const error = (() => {
        try {
          build({ [key]: "log" });
        } catch (e) {
          return e;
        }
      })();
      expect(ToolCallRepairInputError.isInstance(error), `${name} ${key}`).toBe(true);
      expect((error as ToolCallRepairInputError).argument).toBe(`options.${key}`);
      expect((error as Error).message).toContain(`${name}: options.${key} is "log"; expected a function`);
    }
  });

  it.each(surfaces)("%s: its switches must be booleans", (name, build, switches) => {
    for (const key of switches)
      expect(() => build({ [key]: "yes" }), `${name} ${key}`).toThrow(`options.${key} is "yes"; expected a boolean`);
  });

  // Each surface declares every option it takes (its own, the reporting callbacks, the engine's it passes on):
  // a misspelt key is refused by the surface itself, naming it and the nearest option.
  it.each(surfaces)("%s: an unknown key is refused by the surface, naming its nearest option", (name, build) => {
    const error = (() => {
      try {
        build({ onrepair: () => {} });
      } catch (e) {
        return e;
      }
    })();
    expect(ToolCallRepairInputError.isInstance(error), name).toBe(true);
    expect((error as ToolCallRepairInputError).argument).toBe("options.onrepair");
    expect((error as Error).message).toContain(`${name}: options.onrepair is not an option (did you mean onRepair?)`);
    expect((error as Error).message).not.toContain("createRepairer");
  });

  it.each([
    ["toolCallRepairHook", () => toolCallRepairHook({ persit: true } as never), "persist"],
    ["toolCallRepairMiddleware", () => toolCallRepairMiddleware({ repairOnInpt: false } as never), "repairOnInput"],
    ["withRequestRepair", () => withRequestRepair(model(), { onRecover: () => {} } as never), "onRecovery"],
    ["withToolCallRepair", () => withToolCallRepair(new MemorySaver(), { messageKey: "m" } as never), "messagesKey"],
    ["toolCallRepair", () => toolCallRepair({ repairOnInpt: false } as never), "repairOnInput"],
    ["toolCallRepairKit", () => toolCallRepairKit({ messageKey: "m" } as never), "messagesKey"],
    ["toolCallRepairNode", () => toolCallRepairNode({ orphanCall: "remove" } as never), "orphanCalls"],
  ])("%s: its options list names its own options and the engine's", (name, build, near) => {
    expect(build).toThrow(
      new RegExp(
        `^.*${name}: options\\.\\w+ is not an option \\(did you mean ${near}\\?\\); its options are .*provider`,
      ),
    );
  });

  it("level is decided by each surface, and a stored thread's trailing by the checkpointer", () => {
    expect(() => toolCallRepairNode({ level: "request" } as never)).toThrow(
      "toolCallRepairNode: options.level is not an option",
    );
    expect(() => withToolCallRepair(new MemorySaver(), { trailing: "keep" } as never)).toThrow(
      "withToolCallRepair: options.trailing is not an option",
    );
    // Storage gets structural repairs only: nothing there depends on the tools a request carries.
    expect(() => withToolCallRepair(new MemorySaver(), { toolsInRequest: false } as never)).toThrow(
      "withToolCallRepair: options.toolsInRequest is not an option",
    );
    // The setups take trailing and toolsInRequest for the pieces before the model and keep them from the checkpointer.
    for (const options of [{ trailing: "remove" as const }, { toolsInRequest: false }]) {
      expect(() => toolCallRepairKit(options).checkpointer(new MemorySaver())).not.toThrow();
      expect(() => toolCallRepair(options).checkpointer(new MemorySaver())).not.toThrow();
    }
  });

  it("messagesKey must be a non-empty string; options must be an object", () => {
    expect(() => toolCallRepairNode({ messagesKey: 7 as never })).toThrow("options.messagesKey is 7");
    expect(() => withToolCallRepair(new MemorySaver(), { messagesKey: "" })).toThrow("options.messagesKey");
    expect(() => withToolCallRepair(new MemorySaver(), "bedrock" as never)).toThrow(
      'withToolCallRepair: options is "bedrock"; expected an object',
    );
  });

  it("valid options pass, undefined values are defaults", () => {
    expect(() =>
      toolCallRepairMiddleware({
        onRepair: () => {},
        repairOnInput: false,
        recoverRejections: undefined,
      }),
    ).not.toThrow();
    expect(() => toolCallRepairKit({ onRecovery: () => {}, messagesKey: "history" })).not.toThrow();
  });
});
