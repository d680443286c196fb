/**
 * Steering: text the operator types while a turn runs. It waits in the
 * session's queue and is given to the model at the start of the turn's next
 * model call, as a user message marked `steered` (see `runTurn`).
 *
 * @module
 */

/** Lines typed during a turn, oldest first, until the loop takes them. */
export class SteerQueue {
  #items: string[] = [];

  /** Queues `text` for the next model call; blank text is ignored. */
  push(text: string): void {
    const t = text.trim();
    if (t) this.#items.push(t);
  }

  /** Everything queued, oldest first, leaving the queue empty. */
  take(): string[] {
    return this.#items.splice(0);
  }

  /** How many lines wait. */
  get size(): number {
    return this.#items.length;
  }
}
