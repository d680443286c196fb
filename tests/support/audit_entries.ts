/**
 * Reads every audit entry under a state directory, oldest first.
 *
 * @module
 */

// deno-lint-ignore no-explicit-any
export type Entry = Record<string, any>;

/** The entries of `${stateDir}/audit/*.jsonl`, day files in order. */
export async function auditEntries(stateDir: string): Promise<Entry[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(`${stateDir}/audit`)) {
    if (e.name.endsWith(".jsonl")) names.push(e.name);
  }
  const out: Entry[] = [];
  for (const name of names.sort()) {
    const text = await Deno.readTextFile(`${stateDir}/audit/${name}`);
    for (const line of text.split("\n").filter(Boolean)) out.push(JSON.parse(line));
  }
  return out;
}
