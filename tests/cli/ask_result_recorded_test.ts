/** `ask --json` says when a plan's outcome or the session was not recorded. */
import assert from "node:assert/strict";
import { AskResultBuilder } from "../../src/cli/commands/ask_result.ts";

function answered(result: unknown) {
  const b = new AskResultBuilder("main", "m", 0);
  b.add({ type: "tool_start", id: "1", name: "propose_plan", args: {} });
  b.add({ type: "tool_end", id: "1", name: "propose_plan", ok: true, result, ms: 1 });
  b.add({ type: "text", delta: "Done." });
  b.add({
    type: "turn_complete",
    usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
    model: "m",
  });
  return b;
}

Deno.test("a plan that ran without its outcome in the audit makes ask --json say recorded false and exit 1", () => {
  const r = answered({ status: "completed", recorded: false }).build(1);
  assert.deepEqual([r.ok, r.recorded, r.session_saved, r.exit_code], [false, false, true, 1]);
});

Deno.test("a recorded plan and a saved session leave ask --json ok with exit 0", () => {
  const r = answered({ status: "completed", recorded: true }).build(1);
  assert.deepEqual([r.ok, r.recorded, r.session_saved, r.exit_code], [true, true, true, 0]);
  assert.equal(r.session_error, undefined);
});

Deno.test("a session that could not be saved makes ask --json say session_saved false, why, and exit 1", () => {
  const b = answered({ status: "completed", recorded: true });
  b.sessionUnsaved("the session could not be saved to /s/x.jsonl (No space left on device)");
  const r = b.build(1);
  assert.deepEqual([r.ok, r.session_saved, r.exit_code], [false, false, 1]);
  assert.match(r.session_error ?? "", /No space left/);
  assert.equal(r.answer, "Done.");
});
