/**
 * Drives a program in a real terminal through tmux: type, read the screen.
 *
 * @module
 */
import { removeTree } from "./temp.ts";

export const HAS_TMUX = (() => {
  try {
    return new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
})();

async function tmux(...args: string[]): Promise<string> {
  return await tmuxWithEnv(undefined, ...args);
}

async function tmuxWithEnv(
  env: Record<string, string> | undefined,
  ...args: string[]
): Promise<string> {
  const out = await new Deno.Command("tmux", {
    args,
    stdout: "piped",
    stderr: "piped",
    ...(env ? { env, clearEnv: true } : {}),
  }).output();
  if (!out.success) {
    throw new Error(`tmux ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

export class TmuxSession implements AsyncDisposable {
  readonly name: string;
  /** The temporary directory holding the server's socket. */
  readonly #dir: string;
  readonly #socket: string;

  private constructor(name: string, dir: string) {
    this.name = name;
    this.#dir = dir;
    this.#socket = `${dir}/tmux.sock`;
  }

  /** Starts `argv` in a new detached session of a tmux server of its own (`size`: 120×40 unless given). */
  static async start(
    argv: string[],
    env: Record<string, string>,
    cwd: string,
    size: { columns: number; rows: number } = { columns: 120, rows: 40 },
  ): Promise<TmuxSession> {
    const name = `aa${crypto.randomUUID().slice(0, 8)}`;
    const dir = await Deno.makeTempDir({ prefix: "accel-agent-tmux-" });
    const socket = `${dir}/tmux.sock`;
    const shellLine = `${argv.map(quote).join(" ")}; echo "[exit $?]"; sleep 30`;
    // The server starts with exactly this environment, so nothing of ours leaks in.
    const args = [
      "-S",
      socket,
      "new-session",
      "-d",
      "-s",
      name,
      "-x",
      String(size.columns),
      "-y",
      String(size.rows),
      "-c",
      cwd,
    ];
    try {
      await tmuxWithEnv({ TERM: "xterm-256color", ...env }, ...args, shellLine);
    } catch (e) {
      await tmux("-S", socket, "kill-server").catch(() => "");
      await removeTree(dir);
      throw e;
    }
    return new TmuxSession(name, dir);
  }

  async send(...keys: string[]): Promise<void> {
    await tmux("-S", this.#socket, "send-keys", "-t", this.name, ...keys);
  }

  /** Types text literally (no key names). */
  async type(text: string): Promise<void> {
    await tmux("-S", this.#socket, "send-keys", "-t", this.name, "-l", text);
  }

  /** The processes in the pane that have `arg` as one of their arguments (not the shell's line). */
  async processes(arg: string): Promise<number[]> {
    const panes = await tmux("-S", this.#socket, "list-panes", "-a", "-F", "#{pane_pid}");
    const pids = panes.split("\n").filter(Boolean).map(Number).flatMap(sessionMembers);
    return pids.filter((pid) => {
      try {
        return Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").includes(arg);
      } catch {
        return false;
      }
    });
  }

  /**
   * Pastes `text` as a terminal paste does: wrapped in bracketed-paste
   * markers when the program asked for them, line breaks sent as Enter.
   */
  async paste(text: string): Promise<void> {
    await tmux("-S", this.#socket, "set-buffer", "-b", "paste", "--", text);
    await tmux("-S", this.#socket, "paste-buffer", "-p", "-d", "-b", "paste", "-t", this.name);
  }

  /**
   * The pane's text with the last 200 lines of history. A line the terminal
   * wrapped comes back whole (`-J`), so a long line — a path under a temporary
   * HOME — matches whatever the width; trailing spaces are trimmed, as a plain
   * capture does.
   */
  async screen(): Promise<string> {
    const text = await tmux(
      "-S",
      this.#socket,
      "capture-pane",
      "-p",
      "-J",
      "-t",
      this.name,
      "-S",
      "-200",
    );
    return text.replace(/ +$/gm, "");
  }

  /**
   * Waits until the screen matches; returns the screen. `ms` is a ceiling
   * for a screen that never comes, generous by default (the machine may be busy).
   */
  async waitFor(re: RegExp, ms = 60_000): Promise<string> {
    const deadline = performance.now() + ms;
    let screen = "";
    while (performance.now() < deadline) {
      screen = await this.screen();
      if (re.test(screen)) return screen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`screen never matched ${re}:\n${screen}`);
  }

  /**
   * Ends the server and waits (up to 5 s) until the programs in the pane have
   * exited, so nothing writes into a temporary HOME after the test removes it;
   * then removes the socket's directory.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    const panes = await tmux("-S", this.#socket, "list-panes", "-a", "-F", "#{pane_pid}")
      .catch(() => "");
    const pids = panes.split("\n").filter(Boolean).map(Number).flatMap(sessionMembers);
    await tmux("-S", this.#socket, "kill-server").catch(() => "");
    const deadline = performance.now() + 5_000;
    while (pids.some(alive) && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await removeTree(this.#dir);
  }
}

/** The processes of the session `sid` leads (a pane's shell and what it started). */
function sessionMembers(sid: number): number[] {
  const pids: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      // Fields after the command's closing parenthesis: state, ppid, pgrp, session, …
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[3]) === sid) pids.push(Number(e.name));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** True while the process exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function quote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}
