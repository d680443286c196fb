/**
 * JSON the program reads back from disk is checked at the boundary: a
 * damaged or foreign session file or unfinished-plan marker is named in one
 * line (what, which file, what to do), the program run as a user runs it, and
 * the file is left exactly as it was.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

const META = JSON.stringify({ t: "meta", id: "s1", started_at: 1, version: 1 });
const USER = JSON.stringify({ t: "message", m: { role: "user", content: "orbit?" } });

/** Saved sessions that are not what the program wrote, and what the error must say of them. */
const SESSIONS: { name: string; text: string; line: number; why: RegExp }[] = [
  {
    name: "a message without its text",
    text: `${META}\n${USER}\n{"t":"message","m":{"role":"user"}}\n`,
    line: 3,
    why: /m\.content: expected string, got nothing/,
  },
  {
    name: "a line edited into something that is not JSON",
    text: `${META}\n{"t":"message", m: oops}\n${USER}\n`,
    line: 2,
    why: /not JSON/,
  },
  {
    name: "another program's JSON lines",
    text: `{"level":"info","msg":"started"}\n`,
    line: 1,
    why: /t: /,
  },
  {
    name: "a tool message without the call it answers",
    text:
      `${META}\n{"t":"reset","messages":[{"role":"tool","name":"get_parameter","content":"{}"}]}\n`,
    line: 2,
    why: /messages\.0\.toolCallId: expected string, got nothing/,
  },
];

for (const c of SESSIONS) {
  Deno.test(`resuming a session file holding ${c.name} is one line naming the file and line, and the file is kept`, async () => {
    await using user = await UserSetup.start();
    const dir = `${user.stateDir}/sessions`;
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(`${dir}/s1.jsonl`, c.text);
    const r = await user.run(["ask", "--resume", "s1", "what is the orbit?"]);
    assert.equal(r.code, 2, r.stderr);
    const lines = r.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`sessions/s1\\.jsonl:${c.line}: not a session record \\(`));
    assert.match(lines[0]!, c.why);
    assert.match(lines[0]!, /the file is left as it is; resume another session, or move it aside$/);
    assert.equal(await Deno.readTextFile(`${dir}/s1.jsonl`), c.text);
    assert.deepEqual(user.writes, []);
  });
}

/** A run id, as the program names markers. */
const RUN = "3f2a0000-aaaa-4bbb-8ccc-0123456789ab";

/** Markers of unfinished plans that are not what the program wrote. */
const MARKERS: { name: string; text: string; why: RegExp }[] = [
  { name: "another program's JSON", text: `{"run":"${RUN}","state":"ok"}`, why: /planHash/ },
  { name: "text that is not JSON", text: `run=${RUN}\n`, why: /not JSON/ },
  {
    name: "an original value of the wrong kind",
    text: JSON.stringify({
      run: RUN,
      planHash: "ab",
      description: "trim",
      operator: "op",
      host: "h",
      pid: 1,
      startedAt: "2026-11-20T12:00:00Z",
      originals: { "SR:COR:H01:SETPT": { value: 0.5 } },
    }),
    why: /originals\.SR:COR:H01:SETPT/,
  },
];

for (const c of MARKERS) {
  Deno.test(`an unfinished-plan marker holding ${c.name} is reported as damaged by name and commands still run`, async () => {
    await using user = await UserSetup.start();
    const dir = `${user.stateDir}/running`;
    await Deno.mkdir(dir, { recursive: true });
    const path = `${dir}/${RUN}.json`;
    await Deno.writeTextFile(path, c.text);
    const listed = await user.run(["plan", "recover"]);
    assert.equal(listed.code, 0, listed.stderr);
    const shown = listed.stdout.trimEnd().split("\n");
    assert.equal(shown.length, 1, listed.stdout);
    assert.ok(shown[0]!.includes(`cannot be recovered: its marker ${path} is damaged (`), shown[0]);
    assert.match(shown[0]!, c.why);
    assert.match(
      shown[0]!,
      new RegExp(`Check its devices by hand, then: accel-agent plan recover ${RUN} --dismiss$`),
    );
    // Every other command still works, warning once about it.
    const got = await user.run(["get", "SR:COR:H01:SETPT", "--json"]);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stderr, /warning: .*its marker .* is damaged/);
    assert.equal(await Deno.readTextFile(path), c.text);
  });
}

Deno.test("comparing an eval record with a summary cut short names the file, the field and what to pass", async () => {
  await using user = await UserSetup.start();
  const summary = {
    name: "all",
    passes: 1,
    attempts: 2,
    rate: 0.5,
    interval: [0.1, 0.9],
    medianTokens: 1,
    medianToolCalls: 1,
    medianModelCalls: 1,
    medianWallMs: 1,
    reasons: [],
  };
  const record = { schema: "accel-agent.eval/1", model: "m", startedAt: "t", tasks: [summary] };
  const text = JSON.stringify({ ...record, total: { ...summary, interval: [0.1] } });
  const a = await user.file("a.json", JSON.stringify({ ...record, total: summary }));
  const b = await user.file("b.json", text);
  const r = await user.run(["eval", "compare", a, b]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stderr,
    `accel-agent: ${b}: not an eval record (schema accel-agent.eval/1) ` +
      "(total.interval: too small: expected array to have >=2 items); pass a file from eval --out\n",
  );
  assert.equal(await Deno.readTextFile(b), text);
});
