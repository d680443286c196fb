/** The answer an evaluation grades is what the model finally said, once. */
import assert from "node:assert/strict";
import type { AgentEvent } from "../../src/agent/events.ts";
import { failedAttempt, observe } from "../../src/eval/record.ts";
import type { Task } from "../../src/eval/task.ts";

Deno.test("a retry that discards a partial answer leaves the graded answer said once", () => {
  const rec = failedAttempt({ id: "t", category: "read" } as unknown as Task, 1);
  const events: AgentEvent[] = [
    { type: "text", delta: "BPM 1 reads 0.1" },
    { type: "retry", attempt: 1, delayMs: 0, reason: "reset", discardedText: true },
    { type: "text", delta: "BPM 1 reads 0.12 mm." },
  ];
  let answer = "";
  for (const ev of events) answer = observe(ev, rec, new Map(), answer);
  assert.equal(answer, "BPM 1 reads 0.12 mm.");
});
