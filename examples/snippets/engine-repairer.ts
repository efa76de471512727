import type { BaseMessage } from "@langchain/core/messages";
import { brokenThread, check } from "./_support";

const histories: BaseMessage[][] = [brokenThread(), brokenThread().slice(0, 2)];
const seen: string[] = [];
const send = (messages: BaseMessage[]) => seen.push(`${messages.length}`);

// #region docs
import { createRepairer } from "langgraph-tool-repair";

// Options validated and the provider's rules resolved once; then one call per history.
const repairer = createRepairer({ provider: "bedrock", onRepair: (r) => console.log(r.action, r.detail) });

for (const history of histories) {
  if (repairer.isClean(history))
    send(history); // one walk, nothing allocated per message
  else send(repairer.repair(history).messages);
}
// #endregion docs

check(seen.length === 2, "both histories were sent");
check(
  repairer.find(histories[0]).length > 0 && repairer.isClean(histories[1]),
  "the first is broken, the second clean",
);
