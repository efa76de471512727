/**
 * Sets of tool call ids for the clean path, reused across calls. A `Set<string>` costs about 20 ns for a
 * has + add, twice the bare read of a whole message, and the clean path runs before every model call on
 * histories of thousands of messages. Not re-entrant: the clean walk is synchronous and their only user.
 */

/** `[a-zA-Z0-9_-]` as a lookup table. */
const PATTERN = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  PATTERN[c] = /[a-zA-Z0-9_-]/.test(ch) ? 1 : 0;
}

/**
 * Every id seen so far in the history: open addressing, hashed on the characters that are read anyway to
 * check the provider's id pattern, collisions resolved by full comparison, cleared in O(1) with a
 * generation stamp.
 */
export class IdSet {
  private keys: (string | undefined)[] = new Array(1024);
  private stamps = new Uint32Array(1024);
  private mask = 1023;
  private generation = 1;
  private count = 0;

  clear(): void {
    this.count = 0;
    if (++this.generation === 0xffffffff) {
      this.stamps.fill(0);
      this.generation = 1;
    }
  }

  /**
   * Adds `id` when it is a string the provider accepts (1 to `maxLength` characters, of the id pattern when
   * `pattern`) and is new. False otherwise: a rejected id or a duplicate.
   */
  addAccepted(id: unknown, maxLength: number, pattern: boolean): boolean {
    if (typeof id !== "string") return false;
    const n = id.length;
    if (n === 0 || n > maxLength) return false;
    let h = n;
    for (let i = 0; i < n; i++) {
      const c = id.charCodeAt(i);
      if (pattern && (c > 127 || PATTERN[c] === 0)) return false;
      h = Math.imul(h ^ c, 0x01000193);
    }
    return this.insert(id, (h ^ (h >>> 15)) >>> 0);
  }

  private insert(id: string, hash: number): boolean {
    if ((this.count + 1) * 2 > this.mask) this.grow();
    const { keys, stamps, mask, generation } = this;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      if (stamps[i] !== generation) {
        stamps[i] = generation;
        keys[i] = id;
        this.count++;
        return true;
      }
      if (keys[i] === id) return false;
    }
  }

  private grow(): void {
    const old = this.keys;
    const oldStamps = this.stamps;
    const oldGeneration = this.generation;
    const size = (this.mask + 1) * 2;
    this.keys = new Array(size);
    this.stamps = new Uint32Array(size);
    this.mask = size - 1;
    this.generation = 1;
    this.count = 0;
    for (let i = 0; i < old.length; i++) if (oldStamps[i] === oldGeneration) this.addAccepted(old[i], Infinity, false);
  }
}

/**
 * The calls of the current exchange, in `tool_calls` order, and which are still waiting for a result: a
 * handful at most, so a plain array with linear search beats a hash set.
 */
export class OpenCalls {
  private ids: unknown[] = [];
  private answered: boolean[] = [];
  /** Calls of the current assistant message. */
  count = 0;
  /** Of those, still unanswered. */
  waiting = 0;

  reset(): void {
    this.count = 0;
    this.waiting = 0;
  }

  add(id: string): void {
    this.answered[this.count] = false;
    this.ids[this.count++] = id;
    this.waiting++;
  }

  /** An open call that no tool result can answer (an unanswered server tool): it only keeps the exchange open. */
  addUnanswerable(id: unknown): void {
    this.answered[this.count] = true;
    this.ids[this.count++] = id;
    this.waiting++;
  }

  /** Position of `id` among this message's calls, or -1. */
  indexOf(id: unknown): number {
    for (let i = 0; i < this.count; i++) if (this.ids[i] === id) return i;
    return -1;
  }

  /** Marks `id` answered; false when it is not a waiting call of this exchange. */
  answer(id: unknown): boolean {
    const i = this.indexOf(id);
    if (i < 0 || this.answered[i]) return false;
    this.answered[i] = true;
    this.waiting--;
    return true;
  }
}
