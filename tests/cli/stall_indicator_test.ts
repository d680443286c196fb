/**
 * A model that stalls is seen: the spinner counts the seconds waited; a
 * streaming answer that stops gives way to "waiting for the model… N s"
 * until text comes again; and with held text (plain `ask`) a message a retry
 * discarded never reaches stdout. On the renderer, with a manual clock.
 */
import assert from "node:assert/strict";
import type { Io } from "../../src/app/io.ts";
import type { AgentEvent } from "../../src/agent/events.ts";
import { STALL_MS, TerminalRenderer } from "../../src/cli/term/render.ts";
import { ManualTimers } from "../support/manual_timers.ts";

/** A terminal (or not) that keeps stdout and stderr apart. */
function terminal(opts: { stderr?: boolean; stdout?: boolean } = {}) {
  let out = "";
  let err = "";
  const io: Io = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    stdinIsTerminal: false,
    stdoutIsTerminal: opts.stdout ?? true,
    stderrIsTerminal: opts.stderr ?? true,
    color: false,
    columns: () => 100,
    env: () => undefined,
    cwd: "/",
  };
  return { io, out: () => out, err: () => err };
}

/** The last spinner frame drawn on stderr (frames come every 80 ms: a count may lag by one). */
function lastFrame(err: string): string {
  // deno-lint-ignore no-control-regex -- the spinner's own dim style
  return err.split("\r\x1b[2K").at(-1)?.replace(/\x1b\[\d+m/g, "") ?? "";
}

const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
const end = (text: string): AgentEvent => ({
  type: "message_end",
  text,
  toolCalls: [],
  usage,
  finishReason: "stop",
  model: "m",
});

Deno.test("the spinner counts the seconds waited for the model before any text", () => {
  const timers = new ManualTimers();
  const t = terminal();
  const r = new TerminalRenderer(t.io, { showUsage: false, timers });
  r.begin();
  assert.match(lastFrame(t.err()), /thinking…$/);
  timers.advance(999);
  assert.match(lastFrame(t.err()), /thinking…$/, "no count under a second");
  timers.advance(13_001);
  assert.match(lastFrame(t.err()), /thinking… 1[34] s$/);
  r.end();
});

Deno.test("a streaming answer that stalls gives way to a waiting line counting the seconds, and comes back with the text", () => {
  const timers = new ManualTimers();
  const t = terminal();
  const r = new TerminalRenderer(t.io, { showUsage: false, timers });
  r.begin();
  r.handle({ type: "text", delta: "The ring current is" });
  assert.ok(t.out().endsWith("The ring current is"), "shown as it streams");
  const spun = t.err().length;
  timers.advance(STALL_MS - 1);
  assert.equal(t.err().length, spun, "nothing yet: text came just now");
  timers.advance(1);
  assert.ok(t.out().endsWith("The ring current is\r\x1b[2K"), "the unfinished line makes room");
  assert.match(lastFrame(t.err()), /waiting for the model… 2 s$/, "drawn at once");
  timers.advance(10_000);
  assert.match(lastFrame(t.err()), /waiting for the model… 1[12] s$/, "counted from the last text");
  r.handle({ type: "text", delta: " 301 mA.\n" });
  assert.ok(t.err().endsWith("\r\x1b[2K"), "the waiting line is cleared");
  assert.ok(t.out().endsWith("The ring current is 301 mA.\n"), "the line is drawn again, whole");
  r.handle(end("The ring current is 301 mA.\n"));
  r.handle({ type: "turn_complete", usage, model: "m" });
  const frames = t.err().length;
  timers.advance(60_000);
  assert.equal(t.err().length, frames, "no watch left after the turn");
});

Deno.test("held text: a message discarded by a retry never reaches stdout; the one that stands does", () => {
  const timers = new ManualTimers();
  const t = terminal({ stdout: false });
  const r = new TerminalRenderer(t.io, { showUsage: false, holdText: true, timers });
  r.begin();
  r.handle({ type: "text", delta: "The ring current is 12" });
  timers.advance(STALL_MS + 5_000);
  assert.equal(t.out(), "", "held while the model has not finished it");
  assert.match(lastFrame(t.err()), /waiting for the model… [67] s$/);
  r.handle({
    type: "retry",
    attempt: 1,
    delayMs: 500,
    reason: "model stream stalled",
    discardedText: true,
  });
  assert.doesNotMatch(t.err(), /partial answer above is void/, "nothing was shown to take back");
  r.handle({ type: "text", delta: "The ring current is " });
  r.handle({ type: "text", delta: "301 mA." });
  assert.equal(t.out(), "");
  r.handle(end("The ring current is 301 mA."));
  r.handle({ type: "turn_complete", usage, model: "m" });
  r.end();
  assert.equal(t.out(), "The ring current is 301 mA.\n");
});

Deno.test("held text of a message the model never finished is not printed", () => {
  const t = terminal({ stdout: false, stderr: false });
  const r = new TerminalRenderer(t.io, {
    showUsage: false,
    holdText: true,
    timers: new ManualTimers(),
  });
  r.begin();
  r.handle({ type: "text", delta: "The ring current is 12" });
  r.handle({ type: "error", message: "model stream stalled", retryable: true });
  r.end();
  assert.equal(t.out(), "");
  assert.equal(
    t.err(),
    "  error: model stream stalled\n",
    "and stderr, not a terminal, no spinner",
  );
});
