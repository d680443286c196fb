/**
 * A hostile model's device searches, run as a user runs the program (the
 * launcher, the configuration's real grants, a scripted model on loopback,
 * the fake EPICS facility's ChannelFinder): filters built to backtrack for
 * ever, regular expressions that backtrack without a nested repetition,
 * questions of thousands of words. Every call is answered or refused, and the
 * session ends: no search holds the program.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";
import { type ChatMessage, startScriptedLlm } from "../support/scripted_llm.ts";

/** A description as long as a facility may write one (a DESC field holds 40; a property more). */
const LONG = "Horizontal corrector 1 set point, cell 1, storage ring, power supply A1";

type Call = { id: string; ok?: boolean; result?: { total?: number }; error?: string };

function text(m: ChatMessage): string {
  return typeof m.content === "string" ? m.content : "";
}

/** The session's tool calls, after the model asked for `calls` in one turn. */
async function searchAsModel(calls: Record<string, Record<string, unknown>>) {
  await using user = await UserSetup.start({
    epics: {
      edit: (d) => {
        const pv = d.pvs["SR:COR:H01:SETPT"];
        if (pv) pv.description = LONG;
      },
    },
  });
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [
        {
          respond: {
            toolCalls: Object.entries(calls).map(([id, args]) => ({
              id,
              name: "search_device",
              arguments: args,
            })),
          },
        },
        { respond: { text: "Done." } },
      ],
    },
  });
  // Ample room: each search takes milliseconds; a backtracking one would take years.
  const r = await user.run(["ask", "--json", "Find the correctors."], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
    ceilingMs: 300_000,
  });
  assert.equal(r.code, 0, r.stderr);
  const told = (llm.requests[1]?.body.messages ?? []).filter((m) => m.role === "tool").map(text);
  assert.equal(told.length, Object.keys(calls).length, "the model was told of every search");
  const out = JSON.parse(r.stdout);
  return new Map<string, Call>(out.tool_calls.map((c: Call) => [c.id, c]));
}

Deno.test("property and tag filters built to backtrack are matched in time bounded by the value's length", async () => {
  const stars = "*?".repeat(25);
  const calls = await searchAsModel({
    description: {
      pattern: "corrector",
      mode: "informal",
      properties: { recordDesc: `${stars}Z` },
    },
    tag: { pattern: "corrector", mode: "informal", tags: [`${stars}Z`] },
    found: {
      pattern: "corrector",
      mode: "informal",
      properties: { recordDesc: `${"*?".repeat(20)}A1` },
    },
  });
  assert.equal(calls.get("description")?.result?.total, 0);
  assert.equal(calls.get("tag")?.result?.total, 0);
  // The same filter that can match still finds the device it describes.
  assert.equal(calls.get("found")?.result?.total, 1, JSON.stringify(calls.get("found")));
});

Deno.test("regular expressions built to backtrack without a nested repetition are answered, in time bounded by the name's length", async () => {
  const calls = await searchAsModel({
    // Eight ways to read each character: 8^16 paths through a name of 16.
    alternation: { pattern: "/^(?:.|.|.|.|.|.|.|.)*Z$/" },
    // Twelve repetitions side by side: every way to split a name among them.
    stars: { pattern: `/^${".*".repeat(12)}Z$/` },
    nested: { pattern: "/^(S+)+Z$/" },
    // No repetition at all: eight ways to read each of 24 characters, 8^16 paths through a name of 16.
    unrolled: { pattern: `/^${"(?:.|.|.|.|.|.|.|.)".repeat(24)}Z$/` },
    // What operators write still runs, and finds.
    plain: { pattern: "/^SR:COR:H0[1-2]:SETPT$/" },
    two: { pattern: "/^SR:.*:H.*SETPT$/" },
    // What the linear engine cannot run is refused in words, not run.
    backref: { pattern: "/^(SR):.*\\1.*$/" },
  });
  for (const id of ["alternation", "stars", "nested", "unrolled"]) {
    assert.equal(calls.get(id)?.result?.total, 0, `${id}: ${JSON.stringify(calls.get(id))}`);
  }
  assert.equal(calls.get("plain")?.result?.total, 2);
  assert.ok((calls.get("two")?.result?.total ?? 0) >= 2, JSON.stringify(calls.get("two")));
  assert.equal(calls.get("backref")?.ok, false);
  assert.match(JSON.stringify(calls.get("backref")), /never backtracks/);
});
