/**
 * Tab completion: slash commands at the start of a line, device names by
 * segment from a sorted index, nothing waits for the index.
 */
import assert from "node:assert/strict";
import {
  Completer,
  deviceCandidates,
  gatherNames,
  MAX_CANDIDATES,
  type NameColumn,
  sortedNames,
} from "../../../src/cli/repl/completion.ts";
import { slashCommands } from "../../../src/cli/repl/slash.ts";

const column = (names: string[]): NameColumn => ({
  length: names.length,
  at: (i) => names[i] ?? "",
});

/** 100,000 names shaped as a large facility's: SR:BPM:00001 … */
function facilityNames(): string[] {
  const out: string[] = [];
  const systems = ["SR", "BR", "LINAC", "BTS", "RF"];
  const kinds = ["BPM", "COR", "QUAD", "SEXT", "VAC"];
  for (let i = 0; out.length < 100_000; i++) {
    const sys = systems[i % systems.length];
    const kind = kinds[Math.floor(i / 5) % kinds.length];
    out.push(`${sys}:${kind}:${String(Math.floor(i / 25)).padStart(5, "0")}:X`);
  }
  return out;
}

Deno.test("/li completes to /limits, and every command /help lists can be completed", () => {
  const c = new Completer(slashCommands());
  assert.deepEqual(c.complete("/li"), [["/limits"], "/li"]);
  for (const cmd of ["/audit", "/permissions", "/help", "/quit"]) {
    assert.ok(slashCommands().includes(cmd), cmd);
  }
});

Deno.test("a device prefix completes to the next segment, not to every device under it", () => {
  const sorted = sortedNames(column(facilityNames()));
  assert.equal(sorted.length, 100_000);
  assert.deepEqual(deviceCandidates(sorted, "SR:B"), ["SR:BPM:"]);
  assert.deepEqual(deviceCandidates(sorted, "S"), ["SR:"]);
  assert.deepEqual(
    deviceCandidates(sorted, "SR:BPM:0001"),
    [
      "SR:BPM:00010:",
      "SR:BPM:00011:",
      "SR:BPM:00012:",
      "SR:BPM:00013:",
      "SR:BPM:00014:",
      "SR:BPM:00015:",
      "SR:BPM:00016:",
      "SR:BPM:00017:",
      "SR:BPM:00018:",
      "SR:BPM:00019:",
    ].filter((p) => sorted.some((n) => n.startsWith(p))),
  );
  assert.deepEqual(deviceCandidates(sorted, "SR:BPM:00000:"), ["SR:BPM:00000:X"]);
  assert.equal(deviceCandidates(sorted, "SR:BPM:").length, MAX_CANDIDATES);
  assert.deepEqual(deviceCandidates(sorted, "NOPE"), []);
});

Deno.test("before the index is loaded a Tab completes nothing but starts loading it", async () => {
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  let loads = 0;
  const c = new Completer(slashCommands(), async () => {
    loads++;
    await gate;
    return column(["RF:PHASE:SETPT", "RF:PHASE:RDBK", "RF:AMPL:SETPT"]);
  });
  assert.deepEqual(c.complete("what is RF:PH"), [[], "RF:PH"], "answers at once");
  assert.deepEqual(c.complete("what is RF:PH"), [[], "RF:PH"]);
  assert.equal(loads, 1, "loaded once");
  assert.equal(c.complete("/he")[0][0], "/help", "slash commands complete meanwhile");
  release();
  await c.load();
  assert.deepEqual(c.complete("what is RF:PH"), [["RF:PHASE:"], "RF:PH"]);
  assert.deepEqual(c.complete("/limits RF:PHASE:S"), [["RF:PHASE:SETPT"], "RF:PHASE:S"]);
});

Deno.test("a backend whose index fails to load leaves slash completion working", async () => {
  const c = new Completer(slashCommands(), () => Promise.reject(new Error("unreachable")));
  c.complete("RF:");
  await c.load();
  assert.equal(c.ready, false);
  assert.deepEqual(c.complete("/perm"), [["/permissions"], "/perm"]);
});

Deno.test("the first Tab's names arrive slice by slice, the event loop turning between slices", async () => {
  const names = facilityNames();
  const order: string[] = [];
  async function* slices() {
    for (let i = 0; i < names.length; i += 20_000) {
      order.push("slice");
      yield names.slice(i, i + 20_000);
      await new Promise((r) => setTimeout(r, 0));
    }
  }
  setTimeout(() => order.push("timer"), 0);
  const gathered = await gatherNames(slices());
  assert.equal(gathered.length, names.length);
  assert.ok(order.indexOf("timer") > 0 && order.indexOf("timer") < order.length - 1, order.join());
  const c = new Completer([], () => Promise.resolve(gathered));
  await c.load();
  assert.ok(c.ready);
});
