/**
 * The passes, in the order they run. Each one's output is the next one's input. Structural passes come first
 * (what every provider rejects); the request-shaping ones after them run only at the `"request"` level.
 * Except chat-messages (request shaping): it types ChatMessages first, so every pass judges the turns sent.
 */
import { chatMessagesPass } from "./passes/chat-messages";
import { shapePass } from "./passes/shape";
import { callIdsPass } from "./passes/call-ids";
import { callLocationsPass } from "./passes/call-locations";
import { invalidCallsPass } from "./passes/invalid-calls";
import { pairingPass } from "./passes/pairing";
import { responseItemsPass } from "./passes/response-items";
import { toolsAsTextPass } from "./passes/tools-as-text";
import { blocksPass } from "./passes/blocks";
import { contentPass } from "./passes/content";
import { systemMessagesPass } from "./passes/system-messages";
import { turnOrderPass } from "./passes/turn-order";
import { callStepsPass } from "./passes/call-steps";

export const PASSES = Object.freeze([
  chatMessagesPass,
  shapePass,
  callIdsPass,
  invalidCallsPass,
  callLocationsPass,
  pairingPass,
  // After the renames and removals of calls: the copy of a replayed message is told from its original.
  responseItemsPass,
  // After pairing (each result right after its call), before content and turn-order (which merge what it makes).
  toolsAsTextPass,
  blocksPass,
  contentPass,
  systemMessagesPass,
  // After pairing and content (complete blocks, nothing left to drop), before turn-order (which sees the steps).
  callStepsPass,
  turnOrderPass,
]);
