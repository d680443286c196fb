/**
 * The no-LLM sandbox commands: `exec FILE|-` runs Python in the sandbox;
 * `scripts list|run` use the same tools the model uses. Output goes to
 * stdout, Python's stderr to stderr, files written are listed; `--json`
 * prints the result object. What the sandbox prints, and the names of the
 * files it wrote, are shown through {@link untrusted}.
 *
 * @module
 */
import { fitTable, tableWidth } from "../term/fit_table.ts";
import { analyse } from "../../sandbox/analysis.ts";
import { type SandboxRunResult, shapeRun } from "../../tools/sandbox_result.ts";
import type { ListScriptsResult } from "../../tools/list_scripts.ts";
import { wholeResult } from "../../tools/results.ts";
import type { App } from "../../app/app.ts";
import type { Command } from "../args/args.ts";
import { CliError, Exit } from "../../app/exit.ts";
import { abortOnSignals, cancelledBy, type Io, SIGNAL_EXIT } from "../../app/io.ts";
import { style } from "../term/style.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import { errorMessage } from "../../util/errors.ts";
import { bytesText, isRefusal, readCapped, readRegularText } from "../../util/bounded_read.ts";

type SandboxCommand = Extract<Command, { kind: "exec" | "scripts" }>;
type Row = Record<string, unknown>;

export async function runSandboxCommand(
  app: App,
  cmd: SandboxCommand,
  json: boolean,
  io: Io,
): Promise<number> {
  const controller = new AbortController();
  using stop = abortOnSignals(controller, cancelledBy);
  let result: SandboxRunResult | ListScriptsResult;
  if (cmd.kind === "exec") {
    const code = await readCode(cmd.file);
    const { blocked, warnings } = analyse(code, app.sandbox.packages);
    if (blocked.length) throw new CliError(`not run: ${blocked.join("; ")}`, Exit.FAILURE);
    if (!json) { for (const w of warnings) io.err(`accel-agent: warning: ${untrusted(w)}\n`); }
    result = await shapeRun(
      await app.sandbox.runner.run({
        code,
        argv: [cmd.file === "-" ? "<stdin>" : cmd.file],
        ...(cmd.timeoutS ? { timeoutMs: cmd.timeoutS * 1000 } : {}),
        signal: controller.signal,
      }),
    );
  } else {
    const [tool, args] = cmd.action === "list"
      ? ["list_scripts" as const, { keyword: cmd.keyword }]
      : ["run_script" as const, { name: cmd.name, args: cmd.args }];
    const outcome = await app.tools.execute(tool, JSON.stringify(args), controller.signal);
    if (!outcome.ok) {
      if (json) io.out(`${terminalJson(outcome.result)}\n`);
      const e = (outcome.result as Row).error;
      throw new CliError(String(e).replace(/^\w+ failed: /, ""), Exit.FAILURE);
    }
    // The operator's own command shows the whole output, not the model's excerpt.
    const whole = wholeResult(tool, outcome);
    if (!whole) throw new CliError(`${tool} returned no result`, Exit.FAILURE);
    result = whole;
  }
  if (stop.received) return SIGNAL_EXIT[stop.received];
  if (json) {
    io.out(`${terminalJson(result)}\n`);
  } else if ("scripts" in result) {
    renderList(result, io);
  } else {
    renderRun(result, io);
  }
  return "ok" in result && !result.ok ? Exit.FAILURE : Exit.OK;
}

/** The largest script `exec` reads (a file or stdin): code, not data. */
const MAX_CODE_BYTES = 1 << 20;

async function readCode(file: string): Promise<string> {
  try {
    return file === "-"
      ? await readCapped(
        Deno.stdin.readable,
        MAX_CODE_BYTES,
        `stdin: larger than ${bytesText(MAX_CODE_BYTES)}; give the script, not data`,
      )
      : await readRegularText(file, MAX_CODE_BYTES, { fix: "give a Python script to exec" });
  } catch (e) {
    if (isRefusal(e)) throw new CliError(e.message, Exit.USAGE);
    throw new CliError(`${file}: cannot read it (${errorMessage(e)})`, Exit.USAGE);
  }
}

function renderRun(r: SandboxRunResult, io: Io): void {
  if (r.stdout) io.out(untrusted(r.stdout, { multiline: true }));
  if (r.stderr) io.err(untrusted(r.stderr, { multiline: true }));
  for (const f of r.files ?? []) {
    io.err(
      `accel-agent: wrote ${
        untrusted(`${f.name} (${f.bytes} bytes): ${f.path}${f.note ? `; ${f.note}` : ""}`)
      }\n`,
    );
  }
  if (r.files_omitted) {
    io.err(`accel-agent: ${untrusted(String(r.files_omitted))} more files not listed\n`);
  }
  if (r.error) io.err(`accel-agent: ${untrusted(r.error, { multiline: true })}\n`);
}

function renderList(r: ListScriptsResult, io: Io): void {
  const scripts = r.scripts;
  if (!scripts.length) return io.out("no scripts\n");
  const s = style(io.color);
  const t = fitTable(["Script", "Description"], s, tableWidth(io));
  for (const x of scripts) t.push([untrusted(x.name), untrusted(x.description)]);
  io.out(`${t.toString()}\n`);
}
