import assert from "node:assert/strict";
import { wildcard } from "../../src/util/glob.ts";
import { ROOT } from "../support/run_agent.ts";

/** The wildcard as a regular expression: what a scan over names finds, the reference. */
function reference(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(
    /\?/g,
    ".",
  );
  return new RegExp(`^${body}$`, "i");
}

/** A small deterministic generator, so a failure names a pattern that can be run again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

Deno.test("a wildcard matches exactly the names its regular expression matches", () => {
  const next = random(26);
  const pick = (chars: string, n: number) =>
    Array.from({ length: n }, () => chars[Math.floor(next() * chars.length)]).join("");
  for (let k = 0; k < 20_000; k++) {
    const pattern = pick("aB:*?*1", Math.floor(next() * 8));
    const text = pick("abAB:1", Math.floor(next() * 10));
    assert.equal(wildcard(pattern).test(text), reference(pattern).test(text), `${pattern} ${text}`);
  }
  assert.ok(wildcard("ring:bpm:*:x").test("RING:BPM:01:X"));
  assert.ok(wildcard("*").test(""));
  assert.ok(!wildcard("?").test(""));
  assert.ok(wildcard("SR:C03-MG{PS:QH1}*").test("sr:c03-mg{ps:qh1}I:Sp1-SP"));
  assert.ok(wildcard("*É*").test("café") === reference("*É*").test("café"));
});

Deno.test("a wildcard built to backtrack is matched in time bounded by the lengths, not by the ways to place it", async () => {
  // As a regular expression this tries C(200, 30) placements: longer than anyone waits.
  const code = `import { wildcard } from "${ROOT}/src/util/glob.ts";\n` +
    `console.log(wildcard("${"*?".repeat(30)}Z").test("A".repeat(200)));`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdout: "piped",
    stderr: "piped",
    // Ample room: it takes a millisecond.
    signal: AbortSignal.timeout(120_000),
  }).output();
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "false");
});
