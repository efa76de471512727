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
import { OpenCalls, type Loose, type Walk } from "./context";
import { PASSES } from "./pipeline";
import { shapePass } from "./passes/shape";
import { pairingPass } from "./passes/pairing";
import type { ProviderProfile } from "./profiles";

const MESSAGE_SYMBOL = Symbol.for("langchain.message");
const NONE: readonly Loose[] = [];
const ORDER = [shapePass, pairingPass, ...PASSES.filter((p) => p !== shapePass && p !== pairingPass)];

/** One walker: its scratch state is reused by every check of the repairer that owns it. */
export class CleanWalk implements Walk {
  readonly open = new OpenCalls();
  trailingAllowed = false;
  messages: readonly Loose[] = [];
  private readonly starts: (() => void)[] = [];
  private readonly visits: ((m: Loose, i: number) => boolean)[] = [];
  private readonly ends: (() => boolean)[] = [];

  constructor(
    readonly profile: ProviderProfile,
    readonly toolsAsText = false,
  ) {
    for (const pass of ORDER) {
      const check = pass.clean?.(this);
      if (!check) continue;
      if (check.start) this.starts.push(check.start.bind(check));
      this.visits.push(check.visit.bind(check));
      if (check.end) this.ends.push(check.end.bind(check));
    }
  }

  /** Whether the passes would find nothing. `trailingAllowed`: an open trailing exchange is acceptable. */
  isClean(messages: readonly unknown[], trailingAllowed: boolean): boolean {
    this.trailingAllowed = trailingAllowed;
    this.messages = messages as readonly Loose[];
    this.open.reset();
    try {
      for (const start of this.starts) start();
      if (!this.walk(messages as readonly Loose[])) return false;
      for (const end of this.ends) if (!end()) return false;
      return true;
    } finally {
      this.messages = NONE;
    }
  }

  private walk(messages: readonly Loose[]): boolean {
    const visits = this.visits;
    const n = visits.length;
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]; // a hole reads as undefined
      if (m === null || typeof m !== "object" || m[MESSAGE_SYMBOL as never] !== true) return false;
      const content = m.content;
      if (typeof content !== "string" && !Array.isArray(content)) return false;
      for (let k = 0; k < n; k++) if (!visits[k](m, i)) return false;
    }
    return true;
  }
}
