/**
 * Tab completion at the prompt: slash commands, and device names from the
 * device index. The index loads in the background on the first Tab that
 * needs it; until it is there, a Tab completes slash commands only and the
 * prompt never waits for it.
 *
 * @module
 */

/** A column of device names as the index keeps them. */
export interface NameColumn {
  readonly length: number;
  at(i: number): string;
}

/** What readline's `completer` returns: the candidates and the text they complete. */
export type Completion = [string[], string];

/** The most candidates one Tab lists. */
export const MAX_CANDIDATES = 100;

/** Where a name's segments end: EPICS `SR:BPM:01`, TANGO `sr/bpm/01`, dotted names. */
const SEPARATOR = /[:/.]/;

export class Completer {
  #names: string[] | undefined;
  #loading: Promise<void> | undefined;

  /**
   * `commands`: the slash commands; `loadNames`: the device names (absent
   * when the backend has no index), called once, on the first Tab after a
   * word that is not a slash command.
   */
  constructor(
    readonly commands: readonly string[],
    readonly loadNames?: () => Promise<NameColumn | readonly string[]>,
  ) {}

  /** True once device names can be completed. */
  get ready(): boolean {
    return this.#names !== undefined;
  }

  /** Starts loading the names (once); resolves when they are ready or failed to load. */
  load(): Promise<void> {
    this.#loading ??= (this.loadNames?.() ?? Promise.resolve(undefined)).then(
      (column) => {
        if (column) {
          this.#names = Array.isArray(column)
            ? column as string[]
            : sortedNames(column as NameColumn);
        }
      },
      () => {
        // No index (the backend is unreachable): slash commands still complete.
      },
    );
    return this.#loading;
  }

  /** The candidates for the last word of `line`. */
  complete(line: string): Completion {
    const word = /\S*$/.exec(line)?.[0] ?? "";
    if (word.startsWith("/") && line.trimStart() === word) {
      return [this.commands.filter((c) => c.startsWith(word)), word];
    }
    if (!word) return [[], word];
    if (!this.#names) {
      void this.load();
      return [[], word];
    }
    return [deviceCandidates(this.#names, word), word];
  }
}

/**
 * Device names gathered slice by slice (the index hands them over in name
 * order), the event loop given a turn between slices: the prompt never
 * waits for them.
 */
export async function gatherNames(chunks: AsyncIterable<string[]>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of chunks) for (const n of chunk) out.push(n);
  return out;
}

/** The names sorted, for prefix search (the index keeps them sorted: then no sort is needed). */
export function sortedNames(column: NameColumn): string[] {
  const names = new Array<string>(column.length);
  let sorted = true;
  for (let i = 0; i < column.length; i++) {
    names[i] = column.at(i);
    if (i > 0 && (names[i - 1] ?? "") > (names[i] ?? "")) sorted = false;
  }
  return sorted ? names : names.sort();
}

/**
 * The names that start with `prefix`, each cut after the segment the prefix
 * ends in (`SR:B` gives `SR:BPM:` and `SR:BEND:`, not every BPM), at most
 * {@link MAX_CANDIDATES}. A binary search per candidate: fast on 100k names.
 */
export function deviceCandidates(sorted: readonly string[], prefix: string): string[] {
  const out: string[] = [];
  let i = lowerBound(sorted, prefix);
  while (i < sorted.length && out.length < MAX_CANDIDATES) {
    const name = sorted[i] ?? "";
    if (!name.startsWith(prefix)) break;
    const sep = name.slice(prefix.length).search(SEPARATOR);
    if (sep < 0) {
      out.push(name);
      i++;
      continue;
    }
    const segment = name.slice(0, prefix.length + sep + 1);
    out.push(segment);
    i = lowerBound(sorted, `${segment}\uffff`);
  }
  return out;
}

function lowerBound(sorted: readonly string[], x: string): number {
  let lo = 0, hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] ?? "") < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
