/**
 * Under `--json`, stdout holds exactly one JSON object however the run ends:
 * a usage error, a config error, an empty or oversized stdin, a config path
 * that is a FIFO or a device, a signal during `ask`. Run as a user runs it.
 */
import assert from "node:assert/strict";
import { startFakeEpics } from "../support/facility/fake_epics.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import {
  AGENT_FLAGS,
  childEnv,
  killAfter,
  MAIN,
  ROOT,
  runAgent,
  tempConfig,
  waitFor,
} from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

/** The whole of stdout as one JSON value (JSON.parse fails on two objects or trailing text). */
function onlyJson(stdout: string): Record<string, unknown> {
  const value = JSON.parse(stdout);
  assert.equal(typeof value, "object");
  return value;
}

function assertErrorJson(stdout: string, kind: string, code: number, message: RegExp) {
  const out = onlyJson(stdout) as
    & { error: { message: string; kind: string; retryable: boolean } }
    & Record<string, unknown>;
  assert.equal(out.schema, "accel-agent.error/1");
  assert.equal(out.ok, false);
  assert.equal(out.exit_code, code);
  assert.equal(out.error.kind, kind);
  assert.equal(out.error.retryable, false);
  assert.match(out.error.message, message);
  assert.equal(out.error.message.split("\n").length, 1);
}

Deno.test("a usage error under --json prints one error object and exits 2", async () => {
  for (
    const args of [["get", "--json", "--bogus"], ["--json", "frobnicate"], ["get", "--json"], [
      "ask",
      "--json",
      "--stream-json",
      "q",
    ]]
  ) {
    const r = await runAgent(args);
    assert.equal(r.code, 2, args.join(" "));
    assertErrorJson(r.stdout, "usage", 2, /./);
    assert.match(r.stderr, /^accel-agent: /);
  }
});

Deno.test("--stream-json ends with a result line even when the run fails before streaming", async () => {
  const r = await runAgent(["ask", "--stream-json"], { stdin: "  \n" });
  assert.equal(r.code, 2);
  const lines = r.stdout.trim().split("\n");
  assert.equal(lines.length, 1);
  const out = JSON.parse(lines[0] ?? "");
  assert.equal(out.type, "result");
  assert.equal(out.ok, false);
});

Deno.test("ask --json on an empty stdin prints one error object saying what to give", async () => {
  const r = await runAgent(["ask", "--json"], { stdin: "" });
  assert.equal(r.code, 2);
  assertErrorJson(r.stdout, "usage", 2, /ask needs a question/);
});

Deno.test("a config error under --json prints one error object naming the file and line", async () => {
  await using config = await tempConfig('[llm]\nmax_retries = "many"\n');
  const r = await runAgent(["get", "LINAC:BPM:01:X", "--json", "--config", config.path]);
  assert.equal(r.code, 2);
  assertErrorJson(
    r.stdout,
    "config",
    2,
    /config error: .*:2: key llm\.max_retries: expected number/,
  );
});

Deno.test("a config path that is a FIFO is refused at once, not waited on", async () => {
  await using dir = await tempDir();
  const fifo = `${dir.path}/config.toml`;
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success, "mkfifo");
  // A program that opened the FIFO would wait for a writer for ever: the ceiling ends it.
  const r = await runAgent(["get", "LINAC:BPM:01:X", "--json", "--config", fifo], {
    ceilingMs: 60_000,
  });
  assert.equal(r.code, 2, r.stderr);
  assertErrorJson(
    r.stdout,
    "config",
    2,
    /config\.toml: is a FIFO \(named pipe\), not a regular file/,
  );
});

Deno.test("a config path that is /dev/zero is refused, not read without end", async () => {
  const r = await runAgent(["get", "LINAC:BPM:01:X", "--config", "/dev/zero"]);
  assert.equal(r.code, 2);
  assert.equal(
    r.stderr.trim(),
    "accel-agent: config error: /dev/zero: is a character device, not a regular file; pass a config file to --config",
  );
  const env = await runAgent(["get", "LINAC:BPM:01:X", "--json"], {
    env: { ACCEL_AGENT_CONFIG: "/dev/zero" },
  });
  assert.equal(env.code, 2);
  assertErrorJson(env.stdout, "config", 2, /\/dev\/zero: is a character device/);
});

Deno.test("a config file larger than 1 MiB is refused with one line", async () => {
  await using config = await tempConfig(`# ${"x".repeat((1 << 20) + 10)}\n`);
  const r = await runAgent(["get", "LINAC:BPM:01:X", "--config", config.path]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /config error: .*: larger than 1 MiB, too large for a config file; check the path\n$/,
  );
});

Deno.test("ask reading /dev/zero on stdin stops at the 1 MiB cap with one line and JSON", async () => {
  // As a shell runs it: `accel-agent ask --json < /dev/zero`.
  const quoted = [Deno.execPath(), "run", ...AGENT_FLAGS, MAIN, "ask", "--json"].map((a) =>
    `'${a}'`
  );
  const child = new Deno.Command("sh", {
    args: ["-c", `exec ${quoted.join(" ")} < /dev/zero`],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1", OPENAI_API_KEY: "k" }),
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // A program reading /dev/zero without a cap would never stop: the ceiling ends it.
  const ceiling = killAfter(child, 60_000);
  const out = await child.output();
  ceiling.disarm();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr) + ceiling.note();
  assert.equal(out.code, 2, stderr);
  assertErrorJson(stdout, "usage", 2, /stdin holds more than 1 MiB/);
  assert.equal(stderr.trim().split("\n").length, 1, stderr);
});

for (const signal of ["SIGTERM", "SIGHUP"] as const) {
  Deno.test(`${signal} during ask --json cancels the turn and still prints the one result object`, async () => {
    await using llm = await startScriptedLlm({
      scenario: { turns: [{ respond: { fault: "stall", afterText: "Looking" } }] },
    });
    const r = await runAgent(["ask", "--json", "What is the beam current?"], {
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
      onSpawn: async (child) => {
        await waitFor(() => llm.requests.length === 1, 60_000, "the model request");
        child.kill(signal);
      },
      // The model's stream stalls for ever: only the signal can end the program.
      ceilingMs: 60_000,
    });
    const code = signal === "SIGTERM" ? 143 : 129;
    assert.equal(r.code, code, r.stderr);
    const out = onlyJson(r.stdout);
    assert.equal(out.schema, "accel-agent.ask/1");
    assert.equal(out.cancelled, true);
    assert.equal(out.ok, false);
    assert.equal(out.exit_code, code);
  });
}

Deno.test("SIGTERM during get --json ends with exit 143 and one error object saying so", async () => {
  await using fake = startFakeEpics();
  await using config = await tempConfig(fake.config({ read_timeout_ms: 30_000 }));
  const r = await runAgent(["get", "NEVER:ANSWERS", "--json", "--config", config.path], {
    onSpawn: async (child) => {
      await waitFor(() => fake.pvws.stats.subscribes > 0, 60_000, "the subscribe");
      child.kill("SIGTERM");
    },
  });
  // Ended by the signal, not by the 30 s read timeout: the error names the signal.
  assert.equal(r.code, 143, r.stderr);
  assertErrorJson(r.stdout, "cancelled", 143, /cancelled by SIGTERM/);
});

Deno.test("an agent_md that is /dev/zero is refused with one line, not read without end", async () => {
  await using llm = await startScriptedLlm({ scenario: { turns: [{ respond: { text: "hi" } }] } });
  await using config = await tempConfig('[agent]\nagent_md = "/dev/zero"\n');
  const r = await runAgent(["ask", "--json", "--config", config.path, "hello"], {
    env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
  });
  assert.equal(r.code, 2, r.stderr);
  assertErrorJson(
    r.stdout,
    "usage",
    2,
    /\/dev\/zero: is a character device, not a regular file; fix \[agent\] agent_md/,
  );
  assert.equal(llm.requests.length, 0);
});
