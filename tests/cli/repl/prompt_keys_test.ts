/**
 * Keys belong to the prompt that is up: the `y` typed at the approval prompt
 * and the answer typed to a question are that prompt's, never steering text
 * for the model, never a user message in the saved session. Run as a user
 * runs the program (the launcher, the config's grants) in a real terminal.
 */
import assert from "node:assert/strict";
import { call } from "../../agent/subagents/harness.ts";
import { type RecordedRequest, startScriptedLlm } from "../../support/scripted_llm.ts";
import { HAS_TMUX } from "../../support/tmux.ts";
import { LAUNCHED, PROMPT, startRepl } from "../../support/repl_session.ts";
import { tempDir } from "../../support/temp.ts";

const ignore = !HAS_TMUX && !Deno.env.get("CI");
const CEILING = 60_000;

/** Waits until `check` holds, polling, up to a generous ceiling. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + CEILING;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The user messages of a request, as the model received them. */
function userTexts(req: RecordedRequest): string[] {
  return req.body.messages.filter((m) => m.role === "user").map((m) =>
    typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join("")
  );
}

/** The user messages of every session saved under `home`'s state directory. */
async function savedUserTexts(home: string): Promise<string[]> {
  const dir = `${home}/.local/state/accel-agent/sessions`;
  const texts: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".jsonl")) continue;
    for (const line of (await Deno.readTextFile(`${dir}/${e.name}`)).split("\n")) {
      if (!line.trim()) continue;
      const record = JSON.parse(line);
      const messages = record.t === "message"
        ? [record.m]
        : record.t === "reset"
        ? record.messages
        : [];
      for (const m of messages) if (m.role === "user") texts.push(String(m.content));
    }
  }
  return texts;
}

Deno.test({
  name:
    "REPL: the y typed at the approval prompt approves the plan and nothing else: it is not sent to the model nor saved as a user message; a line typed after the prompt is queued as before",
  ignore,
  async fn() {
    let open = () => {};
    const answered = new Promise<void>((r) => (open = r));
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: call("propose_plan", {
              description: "zero H02",
              actions: [{ type: "write", device: "LINAC:COR:H02:SETPT", value: 0, reason: "zero" }],
            }),
          },
          async () => {
            await answered;
            return { text: "H02 is at zero." };
          },
          { expect: { userIncludes: "also check the orbit" }, respond: { text: "Orbit fine." } },
        ],
      },
    });
    // Disposed after the terminal: a failing test still lets the held answer go.
    using _gate = { [Symbol.dispose]: () => open() };
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path, LAUNCHED);
    await term.type("zero H02");
    await term.send("Enter");
    await term.waitFor(/Run this plan\? \(y\/N\)/);
    await term.type("y");
    await term.send("Enter");
    await until(() => llm.requests.length === 2, "the plan's result went to the model");
    // The prompt gave the keys back: a line typed now is the operator's next message.
    await term.type("also check the orbit");
    await term.send("Enter");
    await term.waitFor(/also check the orbit {2}\(queued for the next step\)/);
    open();
    // The plan changed the machine: its logbook draft is asked about first (skipped here).
    await term.waitFor(/H02 is at zero\.[\s\S]*Logbook entry:/);
    await term.send("Down");
    await term.send("Down");
    await term.send("Enter");
    await term.waitFor(/Orbit fine\.[\s\S]*accel›\s*$/m);
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/);
    assert.deepEqual(llm.failures, []);
    assert.equal(llm.requests.length, 3);
    const second = llm.requests[1];
    assert.ok(second);
    assert.match(JSON.stringify(second.body.messages), /"decision\\":\\"approved/);
    for (const req of llm.requests) {
      for (const text of userTexts(req)) {
        assert.ok(
          ["zero H02", "also check the orbit"].includes(text),
          `sent to the model: ${text}`,
        );
      }
    }
    assert.deepEqual(await savedUserTexts(home.path), ["zero H02", "also check the orbit"]);
  },
});

Deno.test({
  name:
    "REPL: the answer typed to the assistant's question reaches the model as that answer only, not also as steering",
  ignore,
  async fn() {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          { respond: call("ask_user", { question: "Which RF station do you mean?" }) },
          {
            expect: { toolResultIncludes: ['"answer":"number 3"'] },
            respond: { text: "Checking station 3 now." },
          },
        ],
      },
    });
    await using home = await tempDir();
    await using term = await startRepl(llm.url, home.path, LAUNCHED);
    await term.type("check the RF station");
    await term.send("Enter");
    await term.waitFor(/Which RF station do you mean\?[\s\S]*Your answer/);
    await term.type("number 3");
    await term.send("Enter");
    await term.waitFor(/Checking station 3 now\.[\s\S]*accel›\s*$/m);
    await term.waitFor(PROMPT);
    await term.type("/quit");
    await term.send("Enter");
    await term.waitFor(/\[exit 0\]/);
    assert.deepEqual(llm.failures, []);
    assert.equal(llm.requests.length, 2, "no further request carried the answer as a question");
    for (const req of llm.requests) {
      assert.deepEqual(userTexts(req), ["check the RF station"]);
    }
    assert.deepEqual(await savedUserTexts(home.path), ["check the RF station"]);
  },
});
