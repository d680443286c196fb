/**
 * Drives a program in a real terminal through tmux: type, read the screen.
 *
 * @module
 */

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
  readonly #socket: string;

  private constructor(name: string, socket: string) {
    this.name = name;
    this.#socket = socket;
  }

  /** Starts `argv` in a new detached session of a tmux server of its own. */
  static async start(
    argv: string[],
    env: Record<string, string>,
    cwd: string,
  ): Promise<TmuxSession> {
    const name = `aa${crypto.randomUUID().slice(0, 8)}`;
    const socket = `${await Deno.makeTempDir()}/tmux.sock`;
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
      "120",
      "-y",
      "40",
      "-c",
      cwd,
    ];
    await tmuxWithEnv({ TERM: "xterm-256color", ...env }, ...args, shellLine);
    return new TmuxSession(name, socket);
  }

  async send(...keys: string[]): Promise<void> {
    await tmux("-S", this.#socket, "send-keys", "-t", this.name, ...keys);
  }

  /** Types text literally (no key names). */
  async type(text: string): Promise<void> {
    await tmux("-S", this.#socket, "send-keys", "-t", this.name, "-l", text);
  }

  async screen(): Promise<string> {
    return await tmux("-S", this.#socket, "capture-pane", "-p", "-t", this.name, "-S", "-200");
  }

  /** Waits until the screen matches; returns the screen. */
  async waitFor(re: RegExp, ms = 15_000): Promise<string> {
    const deadline = performance.now() + ms;
    let screen = "";
    while (performance.now() < deadline) {
      screen = await this.screen();
      if (re.test(screen)) return screen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`screen never matched ${re}:\n${screen}`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await tmux("-S", this.#socket, "kill-server").catch(() => "");
  }
}

function quote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}
