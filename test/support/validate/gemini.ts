/** Google Gemini: rules G1, G2, G3, G5 and G6 on the `contents` array. */
import { readingInput } from "./common";
import { asArray, asString, isDict, validationOptions, type Dict, type PayloadViolation } from "./common";

type GeminiTurnKind = "call" | "response" | "user" | "model";

function geminiTurnKind(content: unknown): GeminiTurnKind {
  if (!isDict(content)) return "user";
  const parts = asArray(content.parts).filter(isDict);
  if (parts.some((p) => p.functionCall !== undefined)) return "call";
  if (parts.some((p) => p.functionResponse !== undefined)) return "response";
  return content.role === "model" ? "model" : "user";
}

function countParts(content: unknown, key: "functionCall" | "functionResponse"): number {
  return isDict(content) ? asArray(content.parts).filter((p) => isDict(p) && p[key] !== undefined).length : 0;
}

export interface GeminiValidationOptions {
  /**
   * G6 (Gemini 3 and later): in the current turn (from the last user text on), the first `functionCall` part
   * of each model step carries a `thoughtSignature`. Default false (Gemini 2.x does not check it).
   */
  thoughtSignatures?: boolean;
}

/** Rules G1, G2, G3, G5 (and G6 when `options.thoughtSignatures`) on a `generateContent` `contents` array. */
export function validateGeminiContents(contents: unknown, options?: GeminiValidationOptions): PayloadViolation[] {
  const fn = "validateGeminiContents";
  const checked = validationOptions(options, fn, { thoughtSignatures: [(v) => typeof v === "boolean", "a boolean"] });
  return readingInput(() => geminiViolations(contents, checked.thoughtSignatures === true), fn, "contents");
}

function geminiViolations(contents: unknown, thoughtSignatures: boolean): PayloadViolation[] {
  const list = asArray(contents);
  const kinds = list.map(geminiTurnKind);
  const violations: PayloadViolation[] = [];
  kinds.forEach((kind, index) => {
    const previous = index > 0 ? kinds[index - 1] : undefined;
    const path = `contents[${index}]`;
    if (kind === "call" && previous !== "user" && previous !== "response") {
      violations.push({
        rule: "G1",
        path,
        payloadIndex: index,
        message:
          "Please ensure that function call turn comes immediately after a user turn or after a function response turn.",
      });
    }
    if (kind === "response" && previous !== "call") {
      violations.push({
        rule: "G2",
        path,
        payloadIndex: index,
        message: "Please ensure that function response turn comes immediately after a function call turn.",
      });
    }
    const callCount = countParts(list[index], "functionCall");
    const answersNext = index + 1 < list.length;
    if (kind === "call" && answersNext && countParts(list[index + 1], "functionResponse") !== callCount) {
      violations.push({
        rule: "G3",
        path: `contents[${index + 1}]`,
        payloadIndex: index + 1,
        message:
          "Please ensure that the number of function response parts is equal to the number of function " +
          "call parts of the function call turn.",
      });
    }
  });
  const last = list[list.length - 1];
  const lastRole = isDict(last) ? last.role : undefined;
  if (list.length > 0 && lastRole !== undefined && lastRole !== "" && lastRole !== "user" && lastRole !== "function") {
    violations.push({
      rule: "G5",
      path: `contents[${list.length - 1}]`,
      payloadIndex: list.length - 1,
      message: "Please ensure that single turn requests end with a user role or the role field is empty.",
    });
  }
  if (thoughtSignatures) violations.push(...unsignedCalls(list, kinds));
  return violations;
}

/** Whether a user content holds text (a function-response turn does not start a new turn). */
const isUserText = (content: unknown, kind: GeminiTurnKind): boolean =>
  kind === "user" && isDict(content) && asArray(content.parts).some((p) => isDict(p) && typeof p.text === "string");

/**
 * G6: the current turn starts at the last user content with text; in it, the first `functionCall` part of each
 * model content needs a non-empty `thoughtSignature` (only the first of parallel calls carries one).
 */
function unsignedCalls(list: unknown[], kinds: GeminiTurnKind[]): PayloadViolation[] {
  let start = 0;
  for (let index = list.length - 1; index >= 0; index--) {
    if (isUserText(list[index], kinds[index])) {
      start = index + 1;
      break;
    }
  }
  const out: PayloadViolation[] = [];
  for (let index = start; index < list.length; index++) {
    if (kinds[index] !== "call") continue;
    const parts = asArray((list[index] as Dict).parts);
    const position = parts.findIndex((p) => isDict(p) && p.functionCall !== undefined);
    const first = parts[position] as Dict;
    const signature = asString(first.thoughtSignature);
    if (signature !== undefined && signature !== "") continue;
    const name = isDict(first.functionCall) ? asString(first.functionCall.name) : undefined;
    out.push({
      rule: "G6",
      path: `contents[${index}].parts[${position}]`,
      payloadIndex: index,
      message:
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, " +
        "and missing thought_signature may lead to degraded model performance. Additional data, function call " +
        `\`default_api:${name ?? ""}\` , position ${position + 1}. ` +
        "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
    });
  }
  return out;
}
