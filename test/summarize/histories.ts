/**
 * Generated conversations, valid by construction for every provider: an optional system message first, then
 * user turns; each turn is a user message, zero or more tool steps (an assistant message with one to three
 * parallel calls, often to the same tool, followed by their results in any order, mixing tools, error results
 * and block content), and a final assistant answer. The history ends on a new user message, or in the middle
 * of a tool loop right after a result run (both are valid requests for no-prefill models).
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import fc from "fast-check";

const TOOL_NAMES = ["search", "fetch_page", "calculator"] as const;

export interface StepSpec {
  tools: string[];
  /** Order in which the results come back (a permutation of the call positions). */
  resultOrder: number[];
  errors: boolean[];
  blockContent: boolean;
  withText: boolean;
}

export interface TurnSpec {
  steps: StepSpec[];
}

export interface HistorySpec {
  system: boolean;
  turns: TurnSpec[];
  /** How the history ends: a new question, or open after the results of these steps. */
  ending: { kind: "question" } | { kind: "mid_loop"; steps: StepSpec[] };
}

export const stepArb: fc.Arbitrary<StepSpec> = fc.integer({ min: 1, max: 3 }).chain((k) =>
  fc.record({
    tools: fc.array(fc.constantFrom(...TOOL_NAMES), { minLength: k, maxLength: k }),
    resultOrder: fc.shuffledSubarray(
      Array.from({ length: k }, (_, i) => i),
      { minLength: k, maxLength: k },
    ),
    errors: fc.array(fc.boolean(), { minLength: k, maxLength: k }),
    blockContent: fc.boolean(),
    withText: fc.boolean(),
  }),
);

export const turnArb: fc.Arbitrary<TurnSpec> = fc.record({ steps: fc.array(stepArb, { maxLength: 3 }) });

export const historySpecArb = (maxTurns = 8): fc.Arbitrary<HistorySpec> =>
  fc.record({
    system: fc.boolean(),
    turns: fc.array(turnArb, { maxLength: maxTurns }),
    ending: fc.oneof(
      fc.constant({ kind: "question" as const }),
      fc.record({ kind: fc.constant("mid_loop" as const), steps: fc.array(stepArb, { minLength: 1, maxLength: 2 }) }),
    ),
  });

/** Builds messages from a spec; ids are unique per history (`<prefix>_<n>`). */
export class HistoryBuilder {
  private callCount = 0;
  private turnCount = 0;

  constructor(private readonly idPrefix = "call") {}

  system(): BaseMessage {
    return new SystemMessage("You are a research assistant.");
  }

  question(): BaseMessage {
    this.turnCount += 1;
    return new HumanMessage({ content: `Question ${this.turnCount}: what about topic ${this.turnCount}?` });
  }

  answer(): BaseMessage {
    return new AIMessage({ content: `Answer to question ${this.turnCount}.` });
  }

  step(spec: StepSpec): BaseMessage[] {
    const calls = spec.tools.map((name) => {
      this.callCount += 1;
      return {
        id: `${this.idPrefix}_${this.callCount}`,
        name,
        args: { query: `q${this.callCount}` },
        type: "tool_call" as const,
      };
    });
    const caller = new AIMessage({ content: spec.withText ? "Let me look that up." : "", tool_calls: calls });
    const results = spec.resultOrder.map((position) => {
      const call = calls[position];
      const text = `${call.name} result for ${call.args.query}`;
      return new ToolMessage({
        content: spec.blockContent ? [{ type: "text", text }] : text,
        tool_call_id: call.id,
        name: call.name,
        ...(spec.errors[position] ? { status: "error" as const } : {}),
      });
    });
    return [caller, ...results];
  }

  turn(spec: TurnSpec): BaseMessage[] {
    return [this.question(), ...spec.steps.flatMap((s) => this.step(s)), this.answer()];
  }

  history(spec: HistorySpec): BaseMessage[] {
    const messages: BaseMessage[] = spec.system ? [this.system()] : [];
    for (const turn of spec.turns) messages.push(...this.turn(turn));
    messages.push(this.question());
    if (spec.ending.kind === "mid_loop") for (const step of spec.ending.steps) messages.push(...this.step(step));
    return messages;
  }
}

export const buildHistory = (spec: HistorySpec): BaseMessage[] => new HistoryBuilder().history(spec);

export const historyArb = (maxTurns = 8): fc.Arbitrary<BaseMessage[]> => historySpecArb(maxTurns).map(buildHistory);
