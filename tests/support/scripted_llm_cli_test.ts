import assert from "node:assert/strict";
import OpenAI from "openai";
import { loadScenario, parseScenario, startScriptedLlm } from "./scripted_llm.ts";
import { parseCliArgs } from "./scripted_llm_cli.ts";
import { clientFor, rejection } from "./scripted_llm_testing.ts";

const here = new URL(".", import.meta.url);
const cliPath = new URL("scripted_llm.ts", here).pathname;
const readBeamCurrent = new URL("scenarios/read_beam_current.json", here).pathname;

/** Runs the scenario file's conversation through the SDK: ask, call the tool, report. */
async function converse(url: string): Promise<string | null | undefined> {
  const client = clientFor(url);
  const tools: OpenAI.ChatCompletionTool[] = [
    { type: "function", function: { name: "read_pv", parameters: { type: "object" } } },
  ];
  const history: OpenAI.ChatCompletionMessageParam[] = [
    { role: "user", content: "What is the beam current?" },
  ];
  const first = await client.chat.completions.create({ model: "m", messages: history, tools });
  const message = first.choices[0]?.message;
  assert.ok(message?.tool_calls?.[0]);
  history.push(message, {
    role: "tool",
    tool_call_id: message.tool_calls[0].id,
    content: JSON.stringify({ value: 401.2, unit: "mA" }),
  });
  const second = await client.chat.completions.create({ model: "m", messages: history, tools });
  return second.choices[0]?.message.content;
}

/** Spawns the CLI and resolves its first stdout line (the base URL). */
async function spawnCli(...args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "--allow-net", "--allow-read", cliPath, ...args],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stdout = "";
  while (!stdout.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) break;
    stdout += value;
  }
  const rest = (async () => {
    for (let r = await lines.read(); !r.done; r = await lines.read()) stdout += r.value;
    return stdout;
  })();
  const finished = async () => {
    const [status, err, out] = await Promise.all([child.status, stderr, rest]);
    return { code: status.code, stderr: err, stdout: out };
  };
  return { child, url: stdout.split("\n")[0] ?? "", finished };
}

async function tempScenario(json: unknown): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(path, JSON.stringify(json));
  return path;
}

Deno.test("a JSON scenario file loads and plays a tool call, then a templated answer", async () => {
  const scenario = await loadScenario(readBeamCurrent);
  assert.equal(scenario.name, "read beam current");
  assert.equal(scenario.turns.length, 2);

  await using llm = await startScriptedLlm({ scenario });
  assert.equal(await converse(llm.url), "The beam current is 401.2 mA.");
  assert.deepEqual(llm.failures, []);
  assert.equal(llm.remaining(), 0);
});

Deno.test("scenario validation names the path of the first problem", async () => {
  const cases: [unknown, RegExp][] = [
    [{ turns: [{ respond: { txt: "typo" } }] }, /\$\.turns\[0\]\.respond\.txt: unknown field/],
    [{ turns: [{ respond: { fault: "stall", ms: 5 } }] }, /respond\.ms: unknown field/],
    [{ turns: [{ respond: { fault: "flood", every: 5 } }] }, /respond\.every: unknown field/],
    [{ turns: [{ respond: { fault: "trickle", delayMs: -1 } }] }, /respond\.delayMs/],
    [{ turns: [{ respond: { fault: "melt" } }] }, /respond\.fault: expected "rate_limit"/],
    [{ turns: [{ respond: { fault: "server_error", status: 404 } }] }, /expected a 5xx/],
    [{ turns: [{ respond: { toolCalls: [{ name: "x", arguments: 3 }] } }] }, /arguments: expected/],
    [{ turns: [{ expect: { lastRole: "bot" }, respond: {} }] }, /expect\.lastRole: expected/],
    [{ turns: [], loop: true }, /a looping scenario needs turns/],
    [{ turn: [] }, /\$\.turn: unknown field/],
  ];
  assert.deepEqual(
    parseScenario({ turns: [{ respond: { fault: "trickle", chunk: "a", delayMs: 3000 } }] }),
    { turns: [{ respond: { fault: "trickle", chunk: "a", delayMs: 3000 } }] },
  );
  for (const [json, message] of cases) {
    assert.throws(() => parseScenario(json, "case.json"), (error: unknown) => {
      assert.ok(error instanceof TypeError);
      assert.match(error.message, message);
      assert.ok(error.message.startsWith("case.json: "));
      return true;
    });
  }
  const path = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(path, "{ not json");
    const error = await rejection(loadScenario(path));
    assert.ok(error instanceof SyntaxError && error.message.startsWith(path), String(error));
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("CLI arguments parse into a path, a port and a timeout", () => {
  assert.deepEqual(parseCliArgs(["s.json"]), { path: "s.json", port: 0, timeoutSeconds: 120 });
  assert.deepEqual(parseCliArgs(["--port=8123", "s.json", "--timeout", "2.5"]), {
    path: "s.json",
    port: 8123,
    timeoutSeconds: 2.5,
  });
  assert.equal(parseCliArgs([]), "missing SCENARIO.json");
  assert.equal(parseCliArgs(["s.json", "--port"]), "--port needs a number, got nothing");
  assert.equal(parseCliArgs(["s.json", "--verbose"]), "unknown option --verbose");
  assert.equal(parseCliArgs(["a.json", "b.json"]), "unexpected argument b.json");
});

Deno.test("the CLI prints its URL, serves the scenario and exits 0 when it is consumed", async () => {
  const cli = await spawnCli(readBeamCurrent, "--timeout", "30");
  assert.match(cli.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  assert.equal(await converse(cli.url), "The beam current is 401.2 mA.");
  const { code, stderr, stdout } = await cli.finished();
  assert.equal(stderr, "");
  assert.equal(stdout, `${cli.url}\n`);
  assert.equal(code, 0);
});

Deno.test("the CLI exits 1 and prints failures when an expectation is not met", async () => {
  const path = await tempScenario({
    name: "strict",
    turns: [{ expect: { model: "gpt-other" }, respond: { text: "ok" } }],
  });
  try {
    const cli = await spawnCli(path);
    await clientFor(cli.url).chat.completions.create({ model: "m", messages: [] });
    const { code, stderr } = await cli.finished();
    assert.equal(code, 1);
    assert.equal(stderr, 'scripted-llm: strict turn 1: expected model "gpt-other", got "m"\n');
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("the CLI exits 1 on timeout or SIGTERM with turns left", async () => {
  const path = await tempScenario({ turns: [{ respond: { text: "never asked" } }] });
  try {
    const timedOut = await (await spawnCli(path, "--timeout", "0.2")).finished();
    assert.equal(timedOut.code, 1);
    assert.match(timedOut.stderr, /timed out after 0\.2s with 1 turn\(s\) unconsumed/);

    const cli = await spawnCli(path);
    cli.child.kill("SIGTERM");
    const stopped = await cli.finished();
    assert.equal(stopped.code, 1);
    assert.match(stopped.stderr, /stopped by a signal with 1 turn\(s\) unconsumed/);
  } finally {
    await Deno.remove(path);
  }
});
