/**
 * The clean path: one walk that decides whether any pass would find something, without building anything.
 * Most histories are clean most of the time, so this is what runs before every model call. It allocates nothing
 * per message, and never looks inside content beyond its first non-blank character, so its cost does not grow
 * with the size of tool results.
 *
 * The walk holds no rule of its own: each pass's `clean` check ({@link CleanCheck}) is asked of every message, and
 * the walk stops at the first that would change something. Shape runs first (the others read the fields it
 * vouches for), pairing next (it opens the exchange the others read).
 *
 * It keeps nothing between calls: every check walks the whole history, so a message changed in place (LangChain
 * messages are mutable, and langchain's human-in-the-loop middleware does mutate `tool_calls`) can never be
 * judged by a stale verdict. Its scratch state belongs to one walker, which belongs to one repairer. A property
 * test checks that it agrees with the passes' finders.
 */
import { turnOfRole, type Turn } from "../messages/inspect";
import { OpenCalls, type Loose, type Walk } from "./context";
import { PASSES } from "./pipeline";
import { shapePass } from "./passes/shape";
import { pairingPass } from "./passes/pairing";

const MESSAGE_SYMBOL = Symbol.for("langchain.message");
const NONE: readonly Loose[] = [];
const ORDER = [shapePass, pairingPass, ...PASSES.filter((p) => p !== shapePass && p !== pairingPass)];

type Visit = (m: Loose, i: number, turn: Turn) => boolean;
const yes = () => true;
/** The checks one walk site calls: a fixed number of call sites, each calling one check, so the engine can inline it. */
const SITES = 8;

/** The visits as {@link SITES} slots, the free ones filled with {@link yes}. */
function slots(visits: Visit[]) {
  if (visits.length > SITES) throw new Error(`the clean walk has ${SITES} sites for checks of one kind: raise SITES`);
  while (visits.length < SITES) visits.push(yes);
}

/** One walker: its scratch state is reused by every check of the repairer that owns it. */
export class CleanWalk implements Walk {
  readonly open = new OpenCalls();
  trailingAllowed = false;
  messages: readonly Loose[] = NONE;
  private readonly starts: (() => void)[] = [];
  private readonly ends: (() => boolean)[] = [];
  private readonly every: Visit[] = [];
  private readonly ai: Visit[] = [];

  constructor(
    readonly profile: Walk["profile"],
    readonly toolsAsText = false,
  ) {
    for (const pass of ORDER) {
      const check = pass.clean?.(this);
      if (check?.start) this.starts.push(check.start);
      if (check?.visit) this.every.push(check.visit);
      if (check?.ai) this.ai.push(check.ai);
      if (check?.end) this.ends.push(check.end);
    }
    slots(this.every);
    slots(this.ai);
  }

  /** Whether the passes would find nothing. `trailingAllowed`: an open trailing exchange is acceptable. */
  isClean(messages: readonly unknown[], trailingAllowed: boolean) {
    this.trailingAllowed = trailingAllowed;
    this.messages = messages as readonly Loose[];
    this.open.reset();
    try {
      for (const start of this.starts) start();
      if (!this.walk(this.messages)) return false;
      for (const end of this.ends) if (!end()) return false;
      return true;
    } finally {
      this.messages = NONE;
    }
  }

  private walk(messages: readonly Loose[]) {
    const [e0, e1, e2, e3, e4, e5, e6, e7] = this.every;
    const [a0, a1, a2, a3, a4, a5, a6, a7] = this.ai;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]; // a hole reads as undefined
      if (m === null || typeof m !== "object" || m[MESSAGE_SYMBOL as never] !== true) return false;
      const content = m.content;
      if (typeof content !== "string" && !Array.isArray(content)) return false;
      const type = m.type; // turnOf of messages/inspect, on a message the walk has just checked
      const t =
        type === "ai"
          ? "assistant"
          : type === "tool"
            ? "tool"
            : type === "human"
              ? "user"
              : type === "system"
                ? "system"
                : type === "generic"
                  ? turnOfRole(m.role)
                  : undefined;
      if (
        !(
          e0(m, i, t) &&
          e1(m, i, t) &&
          e2(m, i, t) &&
          e3(m, i, t) &&
          e4(m, i, t) &&
          e5(m, i, t) &&
          e6(m, i, t) &&
          e7(m, i, t)
        )
      )
        return false;
      if (
        type === "ai" &&
        !(
          a0(m, i, t) &&
          a1(m, i, t) &&
          a2(m, i, t) &&
          a3(m, i, t) &&
          a4(m, i, t) &&
          a5(m, i, t) &&
          a6(m, i, t) &&
          a7(m, i, t)
        )
      )
        return false;
    }
    return true;
  }
}
