/**
 * Sandbox attacks as a user meets them: `accel-agent exec FILE --json`, or
 * the model's `execute_code` in `ask --json`, through the launcher (the
 * grants the config gives, never `-A`), with a `[sandbox]` table of the
 * test's choosing. Every limit not under test is
 * given ample room, so no attack races the clock on a busy machine.
 *
 * @module
 */
import assert from "node:assert/strict";
import { runAsUser, UserSetup } from "../support/user_grants.ts";
import { SNAPSHOT_PATH } from "../support/sandbox.ts";

/** Limits with room to spare; an attack overrides the one it is aimed at. */
export const AMPLE = {
  timeout_s: 120,
  grace_ms: 2_000,
  memory_mb: 512,
  max_output_chars: 4_000,
  max_files: 50,
  max_file_bytes: 1_000_000,
  max_work_mb: 50,
  keep_runs: 50,
} as const;

/** What `exec --json` printed, and what the attack left on the host. */
export interface Outcome {
  code: number;
  json: {
    ok: boolean;
    error?: string;
    stdout: string;
    stderr?: string;
    files?: { name: string; bytes: number; path: string; note?: string }[];
  };
  /** The agent's own stderr. */
  stderr: string;
  ms: number;
}

/** A user's set-up with a data directory, a work root and a canary outside both. */
export class AttackUser implements AsyncDisposable {
  private constructor(readonly user: UserSetup) {}

  static async start(): Promise<AttackUser> {
    const user = await UserSetup.start();
    const a = new AttackUser(user);
    await Deno.mkdir(a.dataDir);
    await Deno.mkdir(`${user.dir}/scripts`);
    await Deno.writeTextFile(`${a.dataDir}/orbit.csv`, "bpm,x\nA,0.1\nB,-0.2\n");
    await Deno.writeTextFile(`${user.dir}/canary.txt`, "CANARY\n");
    return a;
  }

  get dir(): string {
    return this.user.dir;
  }
  get dataDir(): string {
    return `${this.user.dir}/data`;
  }
  /** The test's own inputs (config, code), written before each run. */
  get inputDir(): string {
    return `${this.user.dir}/input`;
  }
  get workRoot(): string {
    return `${this.user.dir}/work`;
  }

  /** Runs `code` with `exec --json` under a `[sandbox]` table of AMPLE plus `limits`. */
  async exec(
    code: string,
    limits: Partial<Record<keyof typeof AMPLE, number>> = {},
    env: Record<string, string> = {},
  ): Promise<Outcome> {
    const configPath = await this.#config(limits);
    const file = `${this.inputDir}/attack.py`;
    await Deno.writeTextFile(file, code);
    const r = await runAsUser(["--config", configPath, "exec", file, "--json"], { env });
    let json: Outcome["json"];
    try {
      json = JSON.parse(r.stdout);
    } catch {
      throw new Error(`exec printed no JSON (exit ${r.code}): ${r.stdout}\n${r.stderr}`);
    }
    return { code: r.code, json, stderr: r.stderr, ms: r.ms };
  }

  /**
   * `ask --json QUESTION` under the same configuration, against the model at
   * `modelUrl` (a scripted one): what the model's tool calls meet.
   */
  async ask(
    question: string,
    modelUrl: string,
    limits: Partial<Record<keyof typeof AMPLE, number>> = {},
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const configPath = await this.#config(limits);
    return await runAsUser(["--config", configPath, "ask", "--json", question], {
      env: { OPENAI_BASE_URL: modelUrl, OPENAI_API_KEY: "k" },
    });
  }

  /** The user's config with a `[sandbox]` table of AMPLE plus `limits`; returns its path. */
  async #config(limits: Partial<Record<keyof typeof AMPLE, number>>): Promise<string> {
    const table = { ...AMPLE, ...limits };
    // The model's tool calls (ask) get ample time; the sandbox's own limits are the table's.
    // The copy lives elsewhere: the limits file it names stays the set-up's.
    const base = (await Deno.readTextFile(this.user.configPath)).replace(
      'limits_file = "limits.toml"',
      `limits_file = ${JSON.stringify(`${this.dir}/limits.toml`)}`,
    );
    const config = `${base}\n` +
      `[agent]\ntool_timeout_s = 3600\n[sandbox]\n` +
      `data_dirs = [${JSON.stringify(this.dataDir)}]\n` +
      `scripts_dir = ${JSON.stringify(`${this.dir}/scripts`)}\n` +
      `work_dir = ${JSON.stringify(this.workRoot)}\n` +
      `cache_dir = ${JSON.stringify(SNAPSHOT_PATH.slice(0, SNAPSHOT_PATH.lastIndexOf("/")))}\n` +
      `prewarm = false\n` +
      Object.entries(table).map(([k, v]) => `${k} = ${v}`).join("\n") + "\n";
    await Deno.mkdir(this.inputDir, { recursive: true });
    const configPath = `${this.inputDir}/config.toml`;
    await Deno.writeTextFile(configPath, config);
    return configPath;
  }

  /** Every path below the set-up's directory but the work root and the state, with size and mtime. */
  async listing(skip: string[] = []): Promise<Map<string, string>> {
    return await listTree(this.dir, [this.workRoot, this.user.stateDir, this.inputDir, ...skip]);
  }

  /** Asserts the run left nothing but plain files and directories (mode ≤ 0755) in `work/` of its run directory. */
  async assertRunDirsClean(): Promise<void> {
    const runs = await Array.fromAsync(Deno.readDir(this.workRoot)).catch(() => []);
    for (const run of runs) {
      const runDir = `${this.workRoot}/${run.name}`;
      for await (const e of Deno.readDir(runDir)) {
        assert.equal(e.name, "work", `only work/ stays in ${runDir} (the Deno cache goes)`);
      }
      for (const [path, info] of await listTree(`${runDir}/work`, [])) {
        assert.match(info, /^(file|dir) /, `${path} is a plain file or directory`);
        const mode = Number(info.split(" ")[2]);
        assert.equal(mode & 0o7022, 0, `${path} has mode ${mode.toString(8)}`);
      }
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.user[Symbol.asyncDispose]();
  }
}

/** `path → "kind size mode mtime"` for every entry below `root`, skipping `skip`. */
export async function listTree(root: string, skip: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const pending = [root];
  while (pending.length) {
    const at = pending.pop() as string;
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(at));
    } catch {
      continue;
    }
    for (const e of entries) {
      const path = `${at}/${e.name}`;
      if (skip.includes(path)) continue;
      const info = await Deno.lstat(path);
      const kind = info.isDirectory ? "dir" : info.isFile ? "file" : "other";
      out.set(path, `${kind} ${info.size} ${info.mode} ${info.mtime?.getTime()}`);
      if (info.isDirectory) pending.push(path);
    }
  }
  return out;
}

/** Asserts two listings are equal, naming what changed. */
export function assertSameTree(before: Map<string, string>, after: Map<string, string>): void {
  const changed = [...new Set([...before.keys(), ...after.keys()])]
    .filter((k) => before.get(k) !== after.get(k));
  assert.deepEqual(changed, [], `changed outside the run directory: ${changed.join(", ")}`);
}

/** One attack: a test with sanitizers off (the agent is a child process). */
export function attack(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, sanitizeOps: false, sanitizeResources: false, fn });
}
