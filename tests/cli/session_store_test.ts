import assert from "node:assert/strict";
import { Session } from "../../src/agent/session.ts";
import type { RunInfo } from "../../src/agent/subagents/manager.ts";
import { parseInvocation } from "../../src/cli/args/args.ts";
import { SessionStore } from "../../src/app/session_store.ts";
import { tempDir } from "../support/temp.ts";

const RUN: RunInfo = {
  id: "agent-3",
  agent: "device_search",
  parentId: "operator",
  level: 2,
  task: "ring BPMs",
  background: true,
  status: "done",
  model: "main",
  tools: ["search_device"],
  turns: 2,
  tokens: 900,
  result: { devices: ["RING:BPM:01:X"], total: 1, writable: [] },
  startedAt: 1,
  endedAt: 2,
};

Deno.test("a session is appended as it grows, rewritten after compaction, and read back with sub-agent results", async () => {
  await using tmp = await tempDir();
  const dir = tmp.path;
  const store = new SessionStore(dir);
  const s = new Session("s1", 5);
  s.messages.push({ role: "user", content: "q1" });
  await store.save(s);
  s.messages.push({ role: "assistant", content: "a1" });
  s.addUsage({ promptTokens: 10, completionTokens: 2, totalTokens: 12 }, "main");
  await store.save(s);
  await store.saveRun("s1", { ...RUN, status: "running" });
  await store.saveRun("s1", RUN);
  // Compaction replaces the array: the next save writes it whole.
  s.messages = [{ role: "user", content: "[summary]" }, ...s.messages.slice(1)];
  s.messages.push({ role: "user", content: "q2" });
  await store.save(s);
  const lines = (await Deno.readTextFile(`${dir}/s1.jsonl`)).trim().split("\n").map((l) =>
    JSON.parse(l).t
  );
  assert.deepEqual(lines, ["meta", "message", "message", "usage", "agent", "agent", "reset"]);
  // A line torn by a kill is ignored.
  await Deno.writeTextFile(`${dir}/s1.jsonl`, '{"t":"message","m":{"ro', { append: true });

  const { session, runs } = await new SessionStore(dir).load();
  assert.equal(session.id, "s1");
  assert.deepEqual(session.messages.map((m) => m.content), ["[summary]", "a1", "q2"]);
  assert.equal(session.usage.totalTokens, 12);
  assert.deepEqual(runs, [RUN]);
});

Deno.test("--resume takes an ID, or means the newest session when none follows", () => {
  const table: [string[], string | undefined][] = [
    [["--resume"], ""],
    [["--resume", "abc-123"], "abc-123"],
    [["--resume", "ask", "q"], ""],
    [["ask", "--resume", "What now?"], ""],
    [["ask", "--resume", "--json", "q"], ""],
    [["ask", "q"], undefined],
  ];
  for (const [args, resume] of table) {
    assert.equal(parseInvocation(args, true).resume, resume, args.join(" "));
  }
});
