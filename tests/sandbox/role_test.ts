/**
 * The compiled executable's path, as far as it can be tested without a
 * `denort` (which `deno compile` would download): `main.ts` started with the
 * sandbox-role argument and *broad* grants, as a compiled executable has,
 * must drop them itself (net, env, run, ffi, sys) and confine Python through
 * its worker's permissions.
 */
import assert from "node:assert/strict";
import { defaultPyodideDir, SANDBOX_ROLE_ARG } from "../../src/sandbox/mod.ts";
import { MAIN } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("main.ts in the sandbox role drops broad grants before running Python", async () => {
  await using tmp = await tempDir("accel-agent-role-");
  const root = await Deno.realPath(tmp.path);
  for (const d of ["data", "work", "outside"]) await Deno.mkdir(`${root}/${d}`);
  await Deno.writeTextFile(`${root}/outside/secret.txt`, "SECRET");
  await Deno.mkdir(`${root}/work/run`);
  await Deno.writeTextFile(`${root}/work/earlier-run.txt`, "EARLIER");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-worker-options", MAIN, SANDBOX_ROLE_ARG],
    env: { OPENAI_API_KEY: "sk-role-FAKE-123" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  const send = (m: unknown) => w.write(new TextEncoder().encode(`${JSON.stringify(m)}\n`));
  await send({
    type: "setup",
    setup: {
      pyodideDir: defaultPyodideDir(),
      dataDirs: [`${root}/data`],
      workRoot: `${root}/work`,
      workDir: `${root}/work/run`,
    },
    nonce: "NONCE",
  });
  const code = [
    "import js",
    "for probe in (lambda: js.Deno.env.get('OPENAI_API_KEY'),",
    `              lambda: js.Deno.readTextFileSync('${root}/outside/secret.txt'),`,
    `              lambda: js.Deno.writeTextFileSync('${root}/outside/new.txt', 'x'),`,
    `              lambda: js.Deno.readTextFileSync('${root}/work/earlier-run.txt'),`,
    "              lambda: js.Deno.Command.new('/bin/true').outputSync(),",
    "              lambda: js.Deno.permissions.requestSync(js.Object.fromEntries([['name', 'net']])).state):",
    "    try:",
    "        print('got', probe())",
    "    except BaseException as e:",
    "        print('refused')",
    "open('/work/ok.txt', 'w').write('fine')",
  ].join("\n");
  await send({
    type: "run",
    id: 1,
    code,
    argv: ["<code>"],
    timeoutMs: 120_000,
    maxOutputChars: 10_000,
  });
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    text += decoder.decode(chunk, { stream: true });
    if (text.includes('"type":"result"')) break;
  }
  await w.close(); // the process ends when its stdin does
  await child.status;
  await child.stderr.cancel();
  const result = text.split("\n").filter((l) => l.startsWith("NONCE "))
    .map((l) => JSON.parse(l.slice("NONCE ".length))).find((m) => m.type === "result");
  assert.ok(result, text);
  assert.equal(result.ok, true, JSON.stringify(result));
  assert.equal(result.stdout, "refused\nrefused\nrefused\nrefused\nrefused\ngot denied\n");
  assert.equal(await Deno.readTextFile(`${root}/work/run/ok.txt`), "fine");
  await assert.rejects(Deno.stat(`${root}/outside/new.txt`));
});
