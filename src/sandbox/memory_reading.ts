/**
 * One reading of the sandbox process's memory, made by its watch (see
 * `memory_watch.ts`). A reading it cannot trust is a kill, never a pass:
 * `Deno.memoryUsage()` reads `/proc/self/statm` and returns 0 without an
 * error when it cannot open it (a full descriptor table), so a zero, a
 * failed read or a number that is not one is reported as an error, which
 * ends the run. The watch keeps a descriptor of its own, opened at its
 * start, and frees it for just the moment of each reading, so a table the
 * code filled does not starve the reading (code that races for the freed
 * slot gets its run killed). The peak resident size from `getrusage` (no
 * file, no descriptor) is a second measure: past the limit in either, the
 * process is over it. That peak is counted only once it rose during the run:
 * Linux starts a new program's peak at the resident size of the process that
 * spawned it (an agent holding a large device index hands its size on) and
 * the interpreter's own start adds its load; a peak no higher than it was
 * when the code began says nothing about the code.
 *
 * @module
 */
import process from "node:process";
import type { MemoryReport } from "./protocol.ts";

/** A descriptor kept open so that one is free for each reading. */
export class ReservedDescriptor {
  #file: Deno.FsFile | undefined;

  constructor(readonly path: string) {
    this.#file = open(path);
  }

  /** Whether a descriptor is held now. */
  get held(): boolean {
    return this.#file !== undefined;
  }

  /**
   * Runs `read` with the reserved descriptor closed (the lowest free slot,
   * which the reading's own open takes), then takes one again.
   */
  around<T>(read: () => T): T {
    this.#file?.close();
    this.#file = undefined;
    try {
      return read();
    } finally {
      this.#file = open(this.path);
    }
  }
}

function open(path: string): Deno.FsFile | undefined {
  try {
    return Deno.openSync(path);
  } catch {
    return undefined; // the next reading goes without; a zero it gets is a kill
  }
}

/** Where a reading comes from (tests replace them). */
export interface MemorySources {
  /** The whole process's resident size in bytes (`Deno.memoryUsage().rss`). */
  rss(): number;
  /** The peak resident size in KiB (`getrusage`), when known. */
  maxRssKib(): number | undefined;
}

/** The process's own sources. */
export const processMemory: MemorySources = {
  rss: () => Deno.memoryUsage().rss,
  maxRssKib: () => process.resourceUsage().maxRSS,
};

const MB = 1024 * 1024;

/** The peak resident size now in KiB, or undefined when it cannot be read. */
export function peakKib(sources: MemorySources = processMemory): number | undefined {
  try {
    const kib = sources.maxRssKib();
    return kib !== undefined && Number.isFinite(kib) && kib > 0 ? kib : undefined;
  } catch {
    return undefined; // not available here: the resident size alone decides
  }
}

/**
 * One measurement against `limitMb`, or why there is none. `startPeakKib` is
 * the peak when the code began ({@link peakKib}); the peak is reported only
 * when it has risen above it.
 */
export function measure(
  reserve: ReservedDescriptor,
  limitMb: number,
  sources: MemorySources = processMemory,
  startPeakKib = 0,
): MemoryReport {
  const kib = peakKib(sources);
  const maxRssMb = kib !== undefined && kib > startPeakKib ? kib * 1024 / MB : undefined;
  const peak = maxRssMb === undefined ? {} : { maxRssMb };
  let rss: number;
  try {
    rss = reserve.around(() => sources.rss());
  } catch (e) {
    return { type: "memory", rssMb: -1, ...peak, error: oneLine(e) };
  }
  if (!Number.isFinite(rss) || rss <= 0) {
    return {
      type: "memory",
      rssMb: -1,
      ...peak,
      error: `its resident size read as ${rss} (no descriptor was free to read it)`,
    };
  }
  const rssMb = rss / MB;
  const over = rssMb > limitMb || (maxRssMb !== undefined && maxRssMb > limitMb);
  return { type: "memory", rssMb, ...peak, ...(over ? { over } : {}) };
}

function oneLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return (text.split("\n")[0] ?? "").slice(0, 200);
}
