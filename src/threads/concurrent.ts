/** Resolves after the event loop has run the tasks queued so far (signal handlers, I/O callbacks, timers due). */
export const nextTurn = () =>
  new Promise<void>((resolve) => (typeof setImmediate === "function" ? setImmediate(resolve) : setTimeout(resolve, 0)));

/** The longest a run goes without a turn of the event loop: how late a Ctrl-C (or a timer) may be seen. */
const TURN_EVERY_MS = 10;

/**
 * `fn` over an async source with at most `concurrency` calls under way, results in source order (but for
 * `undefined`, which is no result). The source
 * is pulled only as results are taken (a slow consumer slows the reads), and nothing new starts once `stop()`
 * says so: the calls under way finish and are yielded, then the generator ends.
 *
 * A new item waits for a turn of the event loop first when {@link TURN_EVERY_MS} have passed since the last
 * one. A synchronous store (better-sqlite3 under SqliteSaver) settles every await at once, so without turns
 * the whole run is one chain of microtasks and nothing queued as a task (a SIGINT handler that asks to stop, a
 * timer) runs before the last thread is done. A turn before every item cost a sixth of a SQLite read (about
 * 200 µs a thread: the turn lets the driver's and the runtime's queued work run); one every 10 ms costs nothing
 * measurable and still sees a Ctrl-C within 10 ms plus one thread.
 */
export async function* mapConcurrently<T, R>(
  source: AsyncIterable<T>,
  concurrency: number,
  fn: (item: T) => Promise<R | undefined>,
  stop: () => boolean,
): AsyncGenerator<R> {
  const iterator = source[Symbol.asyncIterator]();
  const window: Promise<R | undefined>[] = [];
  let done: boolean | undefined = false;
  // The first item waits for a turn too: a stop asked before the run (or while its first page was read) is seen
  // before any thread, however fast the rest goes.
  let lastTurn = -Infinity;
  const fill = async () => {
    while (!done && window.length < concurrency) {
      if (performance.now() - lastTurn >= TURN_EVERY_MS) {
        await nextTurn();
        lastTurn = performance.now();
      }
      if (stop()) return;
      const next = await iterator.next();
      if ((done = next.done)) return;
      const result = fn(next.value);
      result.catch(() => {}); // observed when its turn comes; avoids an unhandled rejection meanwhile
      window.push(result);
    }
  };
  try {
    for (await fill(); window.length; await fill()) {
      const result = await window.shift()!;
      if (result !== undefined) yield result;
    }
  } finally {
    if (!done) await iterator.return?.();
    await Promise.allSettled(window);
  }
}
