/** Google Gemini: rules G1, G2, G3, G5 on the `contents` array. */
import { readingInput } from "../errors";
import { asArray, isDict, type PayloadViolation } from "./common";

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

/** Rules G1, G2, G3, G5 on a `generateContent` `contents` array. */
export function validateGeminiContents(contents: unknown): PayloadViolation[] {
  return readingInput(() => geminiViolations(contents), "validateGeminiContents", "contents");
}

function geminiViolations(contents: unknown): PayloadViolation[] {
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
          "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
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
  return violations;
}
