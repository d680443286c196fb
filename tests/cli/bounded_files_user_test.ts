/**
 * Every file the program reads, tried as a FIFO, as `/dev/zero` and as a
 * 1 GB (sparse) file, through the launcher with a user's grants: each ends
 * in one line naming the file (or, for a cache, is passed over and rebuilt),
 * never waits on the FIFO (a 60 s ceiling kills a program that does, and
 * the test fails on its exit code), and holds bounded memory (the largest
 * resident set of the launcher and the program, from GNU time, stays far
 * below the gigabyte).
 */
import assert from "node:assert/strict";
import { childEnv, ROOT } from "../support/run_agent.ts";
import { LAUNCHER_FLAGS, UserSetup } from "../support/user_grants.ts";

const H01 = "SR:COR:H01:SETPT";
const KINDS = ["fifo", "zero", "big"] as const;
type Kind = typeof KINDS[number];

/** Puts a FIFO, a link to /dev/zero or a 1 GB sparse file at `path`. */
async function plant(path: string, kind: Kind): Promise<void> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true, mode: 0o700 });
  await Deno.remove(path).catch(() => {});
  if (kind === "fifo") {
    assert.ok((await new Deno.Command("mkfifo", { args: [path] }).output()).success);
  } else if (kind === "zero") {
    await Deno.symlink("/dev/zero", path);
  } else {
    using f = await Deno.open(path, { create: true, write: true });
    await f.truncate(1 << 30);
  }
}

/** What each kind is called in the line that refuses it. */
const REFUSED: Record<Kind, string> = {
  fifo: "is a FIFO \\(named pipe\\), not a regular file",
  zero: "is a character device, not a regular file",
  big: "larger than \\d+ (MiB|KiB)",
};

interface Probe {
  code: number;
  stdout: string;
  stderr: string;
  /** The largest resident set of the launcher and its program, in KiB. */
  maxRssKib: number;
}

/** `accel-agent ARGS` through the launcher, its memory measured by GNU time, killed after 60 s. */
async function probe(
  user: UserSetup,
  args: string[],
  env: Record<string, string> = {},
): Promise<Probe> {
  // A case that names its own config file passes it instead of the set-up's.
  const config = args.includes("--config") ? [] : ["--config", user.configPath];
  const mem = `${user.dir}/maxrss`;
  const child = new Deno.Command("timeout", {
    args: [
      "-s",
      "KILL",
      "60",
      "/usr/bin/time",
      "-f",
      "%M",
      "-o",
      mem,
      Deno.execPath(),
      "run",
      ...LAUNCHER_FLAGS,
      `${ROOT}/launch.ts`,
      ...config,
      ...args,
    ],
    cwd: ROOT,
    clearEnv: true,
    env: childEnv(env),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const out = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  const maxRssKib = Number(
    (await Deno.readTextFile(mem).catch(() => "0")).trim().split("\n").at(-1),
  );
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr), maxRssKib };
}

/** The program's memory with every file as it should be, for the bound. */
const MAX_RSS_KIB = 600 * 1024;

interface Case {
  /** Which file, as the operator knows it. */
  file: string;
  /** Extra config tables. */
  extra?: string;
  /** Prepares the set-up (before the file is planted); returns the path to plant. */
  path: (user: UserSetup) => Promise<string> | string;
  args: (user: UserSetup, path: string) => string[];
  env?: (path: string) => Record<string, string>;
  /** What the one line says (before the kind), or "passed over" when the program goes on. */
  says: RegExp | "passed over";
  /** Exit code expected (default: not 0). */
  code?: number;
}

const plan = (user: UserSetup) =>
  user.plan({
    description: "trim",
    actions: [{ type: "write", device: H01, value: 0.3, reason: "t" }],
  });

const CASES: Case[] = [
  {
    file: "the config file",
    path: (u) => `${u.dir}/bad.toml`,
    args: (_, p) => ["--config", p, "get", H01],
    says: /^accel-agent: config error: \S+bad\.toml: /,
  },
  {
    file: "the limits file",
    path: (u) => `${u.dir}/limits.toml`,
    args: () => ["plan", "show", "trim.json"].map((a) => a),
    says: /^accel-agent: limits error: \S+limits\.toml: /,
  },
  {
    file: "a plan file",
    path: (u) => `${u.dir}/p.json`,
    args: (_, p) => ["plan", "show", p],
    says: /^accel-agent: \S+p\.json: /,
  },
  {
    file: "exec FILE",
    path: (u) => `${u.dir}/code.py`,
    args: (_, p) => ["exec", p],
    says: /^accel-agent: \S+code\.py: /,
  },
  {
    file: "a skill",
    extra: '[skills]\ndir = "skills"\n',
    path: (u) => `${u.dir}/skills/trim/SKILL.md`,
    args: () => ["get", H01],
    says: /^accel-agent: skill \S+SKILL\.md: /,
  },
  {
    file: "an agent definition",
    extra: '[agents]\ndir = "agents"\n',
    path: (u) => `${u.dir}/agents/helper.md`,
    args: () => ["get", H01],
    says: /^accel-agent: agent definition \S+helper\.md: /,
  },
  {
    file: "the agent's instructions ([agent] agent_md)",
    extra: '[agent]\nagent_md = "AGENT.md"\n',
    path: (u) => `${u.dir}/AGENT.md`,
    // Read when a turn starts, before the model is asked (nothing listens there).
    args: () => ["ask", "hello"],
    env: () => ({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }),
    says: /^accel-agent: \S+AGENT\.md: /,
  },
  {
    file: "the synonym file",
    extra: '[index]\nsynonyms_file = "synonyms.toml"\n',
    path: (u) => `${u.dir}/synonyms.toml`,
    args: () => ["index", "stats"],
    says:
      /^accel-agent: the device index could not be read: \S+synonyms\.toml: cannot read the synonym file \(\S+: /,
  },
  {
    file: "a script (scripts run NAME)",
    extra: '[sandbox]\nscripts_dir = "scripts"\nprewarm = false\n',
    path: (u) => `${u.dir}/scripts/fit.py`,
    args: () => ["scripts", "run", "fit"],
    says: /\S+fit\.py: /,
  },
  {
    file: "the packages directory's lock file ([sandbox] packages_dir)",
    extra: '[sandbox]\npackages_dir = "packages"\nprewarm = false\n',
    path: (u) => `${u.dir}/packages/pyodide-lock.json`,
    // Read when the app is built, by every command.
    args: () => ["get", H01],
    says: /^accel-agent: \S+pyodide-lock\.json: /,
  },
  {
    file: "audit verify FILE",
    path: (u) => `${u.dir}/day.jsonl`,
    args: (_, p) => ["audit", "verify", p],
    says: /^accel-agent: \S+day\.jsonl: /,
  },
  {
    file: "the audit head record",
    path: (u) => `${u.stateDir}/audit.head`,
    args: () => ["audit", "verify"],
    says: /^accel-agent: \S+audit\.head: /,
  },
  {
    file: "the approval key",
    path: (u) => `${u.stateDir}/keys/approval.key`,
    args: () => ["plan", "show", "trim.json"],
    says: /^accel-agent: cannot issue an approval token: \S+approval\.key: /,
  },
  {
    file: "a saved session (--resume)",
    path: async (u) => {
      await Deno.mkdir(`${u.stateDir}/sessions`, { recursive: true });
      return `${u.stateDir}/sessions/s1.jsonl`;
    },
    args: () => ["ask", "--resume", "s1", "hello"],
    env: () => ({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }),
    // A FIFO or a link is no session file to list; a file too large is refused by name.
    says: /^accel-agent: (no saved session "s1"|\S+s1\.jsonl: )/,
  },
  {
    file: "an eval report (eval compare A B)",
    path: (u) => `${u.dir}/a.json`,
    args: (_, p) => ["eval", "compare", p, p],
    says: /^accel-agent: \S+a\.json: /,
  },
  {
    file: "an eval task (--tasks-dir)",
    path: (u) => `${u.dir}/tasks/t.json`,
    args: (u) => ["eval", "--replay", "--tasks-dir", `${u.dir}/tasks`],
    env: () => ({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }),
    says: /^accel-agent: \S+t\.json: /,
  },
  {
    file: "the site file (ACCEL_AGENT_SITE_FILE)",
    path: (u) => `${u.dir}/site.toml`,
    args: () => ["plan", "show", "trim.json", "--json"],
    env: (p) => ({ ACCEL_AGENT_SITE_FILE: p }),
    // The switch counts as off: the plan fails preflight, naming the file and why.
    says: "passed over",
    code: 1,
  },
  {
    file: "the index cache",
    path: async (u) => {
      const r = await probe(u, ["index", "refresh"]);
      assert.equal(r.code, 0, r.stderr);
      const [name] = [...Deno.readDirSync(`${u.stateDir}/index`)].map((e) => e.name);
      return `${u.stateDir}/index/${name}`;
    },
    args: () => ["index", "stats"],
    says: "passed over",
    code: 0,
  },
];

for (const c of CASES) {
  Deno.test(`${c.file} as a FIFO, /dev/zero and a 1 GB file: one line each, no hang, bounded memory`, async () => {
    await using user = await UserSetup.start(c.extra ? { extra: c.extra } : {});
    await plan(user).then((p) => Deno.rename(p, `${user.dir}/trim.json`));
    const path = await c.path(user);
    for (const kind of KINDS) {
      await plant(path, kind);
      const args = c.args(user, path).map((a) => a === "trim.json" ? `${user.dir}/trim.json` : a);
      const r = await probe(user, args, c.env?.(path));
      const what = `${c.file} as ${kind}: exit ${r.code}\n${r.stderr}`;
      assert.notEqual(r.code, 137, `killed after 60 s (it waited): ${what}`);
      assert.ok(r.maxRssKib > 0 && r.maxRssKib < MAX_RSS_KIB, `${r.maxRssKib} KiB: ${what}`);
      assert.doesNotMatch(r.stderr, /internal error|^\s+at |Stack backtrace/m, what);
      if (c.says === "passed over") {
        assert.equal(r.code, c.code, what);
        if (c.code === 1) {
          const out = JSON.parse(r.stdout);
          assert.equal(out.ok, false, what);
          assert.match(
            out.violations[0].message,
            new RegExp(
              `kill switch \\(\\S+site\\.toml: cannot read the site file \\((${REFUSED[kind]})`,
            ),
            what,
          );
        }
        continue;
      }
      assert.notEqual(r.code, 0, what);
      const lines = r.stderr.trim().split("\n").filter((l) =>
        !l.startsWith("Info Failed to resolve")
      );
      assert.equal(lines.length, 1, what);
      const said = lines[0] ?? "";
      assert.match(said, c.says, what);
      // The kind is named, except where a FIFO or a link is simply no entry of a listing.
      if (!/no saved session/.test(said)) assert.match(said, new RegExp(REFUSED[kind]), what);
    }
  });
}

Deno.test("context directories holding more than a system prompt can take are one line, not read on", async () => {
  for (const [what, files, bytes] of [["bytes", 6, 1 << 20], ["files", 600, 1]] as const) {
    await using user = await UserSetup.start({ extra: '[agent]\ncontext_dirs = ["context"]\n' });
    await Deno.mkdir(`${user.dir}/context`);
    for (let i = 0; i < files; i++) {
      await Deno.writeTextFile(
        `${user.dir}/context/${String(i).padStart(3, "0")}.md`,
        "x".repeat(bytes),
      );
    }
    const r = await probe(user, ["ask", "hello"], { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" });
    const said = `${what}: exit ${r.code}\n${r.stderr}`;
    assert.equal(r.code, 2, said);
    const lines = r.stderr.trim().split("\n").filter((l) =>
      !l.startsWith("Info Failed to resolve")
    );
    assert.equal(lines.length, 1, said);
    assert.match(
      lines[0] ?? "",
      what === "bytes"
        ? /^accel-agent: context dir (?:\/.*\/)?context: its files hold more than 4 MiB together; fix \[agent\] context_dirs$/
        : /^accel-agent: context dir (?:\/.*\/)?context: more than 256 Markdown files; fix \[agent\] context_dirs$/,
      said,
    );
  }
});
