/**
 * `deno task compile`: what it bakes into the executable, and what it says
 * when `deno compile` has no runtime to build on. The executable itself
 * cannot be run here (no `denort`): Deno itself stands in for the runtime,
 * which proves `deno compile` accepts the arguments and embeds the program.
 */
import assert from "node:assert/strict";
import { compileArgs, runGrantPaths } from "../../tools/compile.ts";

const TASK = new URL("../../tools/compile.ts", import.meta.url).pathname;

async function compile(args: string[], denort: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", TASK, ...args],
    env: { DENORT_BIN: denort, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b).trim();
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("compile without a runtime says in one line what it needs and writes nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "accel-agent-compile-" });
  try {
    const r = await compile(["--output", `${dir}/accel-agent`], `${dir}/no-denort`);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /^compile: DENORT_BIN=.*no-denort is not a file: point it at a local denort 2\./,
    );
    assert.ok(!r.stderr.includes("\n"), r.stderr);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a path with a comma is refused (Deno's grant lists cannot hold one) and nothing is written", async () => {
  const dir = await Deno.makeTempDir({ prefix: "accel-agent-compile-" });
  try {
    const r = await compile(["--output", `${dir}/a,b/accel-agent`], Deno.execPath());
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^compile: .*a,b\/accel-agent: a path with a comma cannot be granted/);
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the configured grants and the sandbox's V8 flags are baked into deno compile's arguments", () => {
  const args = compileArgs(
    { hosts: ["gw.example:8080", "127.0.0.1:11434"], runPaths: ["/opt/accel/accel-agent"] },
    { memory_mb: 256, optimize: "eager" },
    "/opt/accel/accel-agent",
  );
  assert.ok(args.includes("--allow-net=gw.example:8080,127.0.0.1:11434"));
  assert.ok(args.includes("--allow-run=/opt/accel/accel-agent"), "only itself, as the sandbox");
  assert.ok(!args.includes("-A") && !args.includes("--allow-all"));
  assert.ok(args.includes("--unstable-worker-options"));
  assert.ok(args.includes("--v8-flags=--wasm-max-mem-pages=4096,--no-wasm-dynamic-tiering"));
  const hot = compileArgs(
    { hosts: [], runPaths: ["/x"] },
    { memory_mb: 512, optimize: "hot" },
    "/x",
  );
  assert.ok(hot.includes("--v8-flags=--wasm-max-mem-pages=8192"));
  // Files named to deno compile exist (a rename would otherwise break only the build).
  for (const a of args.filter((a) => a.startsWith("--include=") || a.startsWith("--config="))) {
    assert.ok(Deno.statSync(a.slice(a.indexOf("=") + 1)).isFile, a);
  }
});

Deno.test("deno compile accepts the arguments and embeds the program and Pyodide (Deno standing in for denort)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "accel-agent-compile-" });
  try {
    // Through a symlinked directory: the grant must name the resolved path too.
    await Deno.mkdir(`${dir}/real`);
    await Deno.symlink(`${dir}/real`, `${dir}/link`);
    assert.deepEqual(runGrantPaths(`${dir}/link/accel-agent`), [
      `${dir}/link/accel-agent`,
      `${await Deno.realPath(dir)}/real/accel-agent`,
    ]);
    const r = await compile(["--output", `${dir}/link/accel-agent`], Deno.execPath());
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `${dir}/link/accel-agent`);
    const size = Deno.statSync(`${dir}/real/accel-agent`).size;
    // Deno alone is about 100 MB; Pyodide's WebAssembly and standard library add over 10 MB.
    assert.ok(size > Deno.statSync(Deno.execPath()).size + 10_000_000, `${size} bytes`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
