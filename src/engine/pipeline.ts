/** The passes, in the order they run. Each one's output is the next one's input. */
import type { RepairPass } from "./context";
import { shapePass } from "./passes/shape";
import { callIdsPass } from "./passes/call-ids";
import { callLocationsPass } from "./passes/call-locations";
import { invalidCallsPass } from "./passes/invalid-calls";
import { pairingPass } from "./passes/pairing";
import { contentPass } from "./passes/content";
import { turnOrderPass } from "./passes/turn-order";

export const PASSES: readonly RepairPass[] = [shapePass, callIdsPass, invalidCallsPass, callLocationsPass, pairingPass, contentPass, turnOrderPass];
