/**
 * The command table: flags in any order, generated help, one-line errors
 * naming the flag and the command, and the files a command line names.
 */
import assert from "node:assert/strict";
import { parseInvocation } from "../../src/cli/args/args.ts";
import { COMMANDS } from "../../src/cli/args/commands_table.ts";
import { commandHelp, globalHelp } from "../../src/cli/args/help.ts";
import { commandFiles } from "../../src/cli/args/command_files.ts";
import { GLOBAL_FLAGS } from "../../src/cli/args/table.ts";
import { UsageError } from "../../src/app/exit.ts";
import { runAgent } from "../support/run_agent.ts";

Deno.test("global flags parse after the command as before it", () => {
  const after = parseInvocation(["get", "X", "--json", "--no-color", "-c", "f.toml"], false);
  const before = parseInvocation(["--json", "--no-color", "-c", "f.toml", "get", "X"], false);
  assert.deepEqual(after, before);
  assert.deepEqual(after.command, { kind: "get", devices: ["X"] });
  assert.equal(after.json, true);
  assert.equal(after.noColor, true);
  assert.equal(after.config, "f.toml");
});

Deno.test("a command's flags parse in any order around its arguments", () => {
  const a = parseInvocation(["logs", "--limit", "5", "archive", "-d", "A", "--device=B"], false);
  assert.deepEqual(a.command, {
    kind: "logs",
    source: "archive",
    from: undefined,
    to: undefined,
    devices: ["A", "B"],
    text: undefined,
    severity: undefined,
    limit: 5,
  });
});

Deno.test("an unknown flag is one line naming the flag and the command, pointing to its help", () => {
  for (
    const [args, pattern] of [
      [["get", "X", "--frob"], /^unknown option --frob for "get"; see accel-agent get --help$/],
      [
        ["plan", "show", "p.toml", "-z"],
        /^unknown option -z for "plan"; see accel-agent plan --help$/,
      ],
      [
        ["get", "X", "--reusable"],
        /^--reusable is not an option of "get"; see accel-agent get --help$/,
      ],
      [["get", "X", "--config"], /^--config needs a value; see accel-agent get --help$/],
      [["get", "X", "--json=yes"], /^--json takes no value; see accel-agent get --help$/],
    ] as const
  ) {
    assert.throws(() => parseInvocation([...args], false), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.match(e.message, pattern);
      return true;
    });
  }
});

Deno.test("--help lists every command and every flag of the table; COMMAND --help shows its own", () => {
  const help = globalHelp();
  for (const c of COMMANDS) {
    for (const [args] of c.usage) assert.ok(help.includes(`accel-agent ${args}`), args);
    for (const f of c.flags) assert.ok(help.includes(`--${f.name}`), `${c.name} --${f.name}`);
  }
  for (const f of GLOBAL_FLAGS) assert.ok(help.includes(`--${f.name}`), f.name);
  const plan = commandHelp("plan") ?? "";
  assert.match(plan, /--approved-hash TOKEN +run: the approval token from plan show/);
  assert.doesNotMatch(plan, /--subsystem/);
  assert.match(plan, /Global options:[^]*--no-color/);
  assert.equal(commandHelp("frobnicate"), undefined);
  assert.deepEqual(parseInvocation(["plan", "--help"], false).command, {
    kind: "help",
    command: "plan",
  });
});

Deno.test("the files a command line names come from the table's entries", async () => {
  assert.deepEqual(await commandFiles(["plan", "show", "a.toml", "--no-color"]), ["a.toml"]);
  assert.deepEqual(await commandFiles(["--json", "exec", "b.py"]), ["b.py"]);
  assert.deepEqual(await commandFiles(["exec", "-"]), []);
  assert.deepEqual(await commandFiles(["audit", "verify", "c.jsonl"]), ["c.jsonl"]);
  assert.deepEqual(await commandFiles(["get", "plan"]), []);
});

Deno.test("accel-agent --version --no-color and plan --help answer without a config", async () => {
  const env = { ACCEL_AGENT_CONFIG: "/nonexistent" };
  const v = await runAgent(["--version", "--no-color"], { env });
  assert.equal(v.code, 0, v.stderr);
  assert.match(v.stdout, /^accel-agent \d+\.\d+\.\d+\n$/);
  const v2 = await runAgent(["get", "X", "--version"], { env });
  assert.match(v2.stdout, /^accel-agent \d+\.\d+\.\d+\n$/);
  const h = await runAgent(["plan", "--help", "--no-color"]);
  assert.equal(h.code, 0, h.stderr);
  assert.match(h.stdout, /^Usage:\n {2}accel-agent plan show PLAN/);
});

Deno.test("at 60 and 44 columns, --help and every command's --help fit and split no word", () => {
  const words = (text: string) => new Set(text.split(/\s+/).filter(Boolean));
  for (const columns of [60, 44]) {
    const helps: [string, string, string][] = [
      ["--help", globalHelp(columns), globalHelp(10_000)],
      ...COMMANDS.map((c): [string, string, string] => [
        `${c.name} --help`,
        commandHelp(c.name, columns) ?? "",
        commandHelp(c.name, 10_000) ?? "",
      ]),
    ];
    for (const [what, narrow, wide] of helps) {
      const long = narrow.split("\n").filter((l) => [...l].length > columns);
      assert.deepEqual(long, [], `${what} at ${columns}: lines too wide`);
      const shown = words(narrow);
      const split = [...words(wide)].filter((w) => [...w].length <= columns && !shown.has(w));
      assert.deepEqual(split, [], `${what} at ${columns}: words split`);
    }
  }
});
