/**
 * `accel-agent search WORDS` answered from the cached index before the rest
 * of the program loads, run through the launcher with a user's grants: the
 * same answer as the full path, and the full path whenever anything the
 * shortcut rests on changed.
 */
import assert from "node:assert/strict";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { tempDir } from "../support/temp.ts";
import { quickArgs } from "../../src/cli/quick_search.ts";
import { parseInvocation } from "../../src/cli/args/args.ts";

async function launch(dir: string, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-env",
      "--allow-run",
      `${ROOT}/launch.ts`,
      "-c",
      `${dir}/config.toml`,
      "--no-color",
      ...args,
    ],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv({ HOME: dir }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

Deno.test("a search with an unchanged configuration answers from the cache as the full path does", async () => {
  await using home = await tempDir();
  await Deno.writeTextFile(`${home.path}/config.toml`, `[state]\ndir = "${home.path}/state"\n`);
  const args = ["search", "the", "last", "three", "linac", "klystrons", "forward", "power"];
  const full = await launch(home.path, args);
  assert.equal(full.code, 0, full.stderr);
  const ticket = `${home.path}/state/index/search-ticket.json`;
  assert.ok((await Deno.stat(ticket)).isFile, "the full path leaves its ticket");
  const quick = await launch(home.path, args);
  assert.equal(quick.code, 0, quick.stderr);
  assert.equal(quick.stdout, full.stdout);
  assert.match(quick.stdout, /LINAC:KLY:06:FWD:PWR[\s\S]*LINAC:KLY:08:FWD:PWR/);
  const json = await launch(home.path, [...args, "--json"]);
  assert.equal(JSON.parse(json.stdout).selection, "last 3");
  // Nothing is everything asked for: the same honest answer from the cache.
  const none = await launch(home.path, ["search", "linac", "sextupoles", "--json"]);
  const page = JSON.parse(none.stdout);
  assert.equal(page.total, 0);
  assert.deepEqual(page.unmatched, ["sextupoles"]);
  assert.ok(page.suggestions.length > 0);
});

Deno.test("an unfinished plan, a changed configuration or a damaged cache takes the full path", async () => {
  await using home = await tempDir();
  const config = `${home.path}/config.toml`;
  await Deno.writeTextFile(config, `[state]\ndir = "${home.path}/state"\n`);
  const args = ["search", "ion", "pump", "pressure", "cell", "4"];
  const first = await launch(home.path, args);
  assert.equal(first.code, 0, first.stderr);
  // A marker of a plan whose process died: only the full path warns of it.
  await Deno.mkdir(`${home.path}/state/running`, { recursive: true });
  await Deno.writeTextFile(`${home.path}/state/running/r1.json`, "{ damaged");
  const warned = await launch(home.path, args);
  assert.match(warned.stderr, /warning/, warned.stderr);
  assert.equal(warned.stdout, first.stdout);
  await Deno.remove(`${home.path}/state/running/r1.json`);
  // A damaged cache file: the full path builds it again, and the answer stands.
  const index = `${home.path}/state/index`;
  for await (const e of Deno.readDir(index)) {
    if (e.name.endsWith(".idx")) await Deno.writeTextFile(`${index}/${e.name}`, "garbage");
  }
  const rebuilt = await launch(home.path, args);
  assert.equal(rebuilt.code, 0, rebuilt.stderr);
  assert.equal(rebuilt.stdout, first.stdout);
  // A configuration that no longer loads is reported, never bypassed.
  await Deno.writeTextFile(config, `[state]\ndir = "${home.path}/state"\nbogus_key = 1\n`);
  const bad = await launch(home.path, args);
  assert.equal(bad.code, 2, bad.stdout);
  assert.match(bad.stderr, /config error/);
});

Deno.test("the shortcut reads a command line exactly as the full parser does, or not at all", () => {
  const lines = [
    ["search", "ion", "pump"],
    ["-c", "x.toml", "search", "bpm", "--json"],
    ["--config=x.toml", "search", "--limit", "5", "--offset", "10", "linac"],
    ["search", "--words", "RING:BPM", "--no-color"],
    ["search", "corrector", "--writable", "--subsystem", "RING"],
    ["search", "corrector", "--read-only"],
    ["search", "bpm", "--limit", "0"],
    ["search", "bpm", "--limit=7"],
    ["search", "bpm", "--model", "m"],
    ["search", "bpm", "--profile", "observer"],
    ["search", "--", "-x"],
    ["ask", "search", "for", "bpms"],
    ["search"],
    ["search", "bpm", "--writable", "--read-only"],
    ["search", "bpm", "--bogus"],
  ];
  for (const line of lines) {
    const quick = quickArgs(line);
    if (quick === undefined) continue;
    const full = parseInvocation(line, false);
    assert.equal(full.command.kind, "search", line.join(" "));
    if (full.command.kind !== "search") continue;
    assert.equal(quick.words, full.command.pattern, line.join(" "));
    assert.equal(quick.config, full.config, line.join(" "));
    assert.equal(quick.json, full.json, line.join(" "));
    assert.equal(quick.noColor, full.noColor, line.join(" "));
    assert.equal(quick.forceWords, full.command.mode === "informal", line.join(" "));
    assert.equal(quick.subsystem, full.command.subsystem, line.join(" "));
    assert.equal(quick.writable, full.command.writable, line.join(" "));
    assert.equal(quick.limit, full.command.limit, line.join(" "));
    assert.equal(quick.offset, full.command.offset, line.join(" "));
  }
  assert.equal(quickArgs(["search", "bpm", "--limit", "0"]), undefined);
  assert.equal(quickArgs(["ask", "search", "for", "bpms"]), undefined);
  assert.equal(quickArgs(["search", "bpm", "--profile", "observer"]), undefined);
  assert.ok(quickArgs(["-c", "x.toml", "search", "bpm", "--json"]));
});

Deno.test("a ticket pointing elsewhere, or not of this program, is not trusted", async () => {
  await using home = await tempDir();
  await Deno.writeTextFile(`${home.path}/config.toml`, `[state]\ndir = "${home.path}/state"\n`);
  const args = ["search", "beam", "loss", "monitors", "in", "the", "transfer", "line", "--json"];
  const first = await launch(home.path, args);
  assert.equal(first.code, 0, first.stderr);
  const path = `${home.path}/state/index/search-ticket.json`;
  const ticket = JSON.parse(await Deno.readTextFile(path));
  // Another file as the cache: its header is not an index of this source.
  await Deno.writeTextFile(
    path,
    JSON.stringify({ ...ticket, cacheFile: `${home.path}/config.toml` }),
  );
  const elsewhere = await launch(home.path, args);
  assert.equal(elsewhere.code, 0, elsewhere.stderr);
  assert.deepEqual(JSON.parse(elsewhere.stdout), JSON.parse(first.stdout));
  // Not JSON, or of another version: the full path, and a fresh ticket.
  await Deno.writeTextFile(path, "{ not json");
  const garbled = await launch(home.path, args);
  assert.deepEqual(JSON.parse(garbled.stdout), JSON.parse(first.stdout));
  assert.equal(JSON.parse(await Deno.readTextFile(path)).version, ticket.version);
});

Deno.test("a cache damaged inside its postings is built again, and the search answers as before", async () => {
  await using home = await tempDir();
  await Deno.writeTextFile(`${home.path}/config.toml`, `[state]\ndir = "${home.path}/state"\n`);
  const args = ["search", "horizontal", "steerers", "in", "the", "linac", "--json"];
  const first = await launch(home.path, args);
  assert.equal(first.code, 0, first.stderr);
  const index = `${home.path}/state/index`;
  for await (const e of Deno.readDir(index)) {
    if (!e.name.endsWith(".idx")) continue;
    // Every posting names a device past the last one; the header still fits the file.
    const bytes = await Deno.readFile(`${index}/${e.name}`);
    const view = new DataView(bytes.buffer);
    const head = JSON.parse(
      new TextDecoder().decode(bytes.subarray(8, 8 + view.getUint32(0, true))),
    );
    const p = head.sections.postings as { offset: number; length: number };
    for (let at = p.offset; at < p.offset + p.length; at += 4) view.setUint32(at, 0xfffffff1, true);
    await Deno.writeFile(`${index}/${e.name}`, bytes);
  }
  const damaged = await launch(home.path, args);
  assert.equal(damaged.code, 0, damaged.stderr);
  assert.deepEqual(JSON.parse(damaged.stdout), JSON.parse(first.stdout));
  // The cache was written again: the next search answers from it.
  const again = await launch(home.path, args);
  assert.deepEqual(JSON.parse(again.stdout), JSON.parse(first.stdout));
});
