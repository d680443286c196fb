/**
 * The deadline of a turn's waiting for the model.
 *
 * @module
 */

/**
 * The time a turn has waited for the model, against its deadline: each wait
 * (one model call with its compaction) gets a signal that aborts when the
 * deadline's remainder runs out, and adds its duration when it ends.
 */
export class ModelWait {
  #spentMs = 0;
  constructor(readonly deadlineMs: number | undefined) {}

  /** True once the waits have used the whole deadline. */
  spent(): boolean {
    return this.deadlineMs !== undefined && this.#spentMs >= this.deadlineMs;
  }

  begin(signal: AbortSignal): { signal: AbortSignal; past(): boolean; end(): void } {
    const started = performance.now();
    const timeout = this.deadlineMs === undefined
      ? undefined
      : AbortSignal.timeout(Math.max(1, Math.ceil(this.deadlineMs - this.#spentMs)));
    let ended = false;
    return {
      signal: timeout ? AbortSignal.any([signal, timeout]) : signal,
      past: () => timeout?.aborted === true && !signal.aborted,
      end: () => {
        if (ended) return;
        ended = true;
        this.#spentMs += performance.now() - started;
        if (timeout?.aborted) this.#spentMs = Math.max(this.#spentMs, this.deadlineMs ?? 0);
      },
    };
  }
}
