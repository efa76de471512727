/** Finished tool results LangGraph discarded (src/threads/salvage.ts): read from pending writes. */
import { describe, expect, it } from "vitest";
import { resultsInWrites } from "../../src/threads/salvage";
import { toolResult } from "../support/builders";

describe("resultsInWrites", () => {
  it("takes real tool results of the wanted calls from one channel's writes, single or listed", () => {
    const a = toolResult("a");
    const b = toolResult("b");
    const found = resultsInWrites(
      [
        ["t1", "messages", [a]],
        ["t2", "messages", b],
        ["t3", "other", [toolResult("c")]],
        ["t4", "messages", [toolResult("z")]],
      ],
      "messages",
      new Set(["a", "b", "c"]),
    );
    expect([...found.keys()]).toEqual(["a", "b"]);
    expect(found.get("a")).toBe(a);
  });
});
