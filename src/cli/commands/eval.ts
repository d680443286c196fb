/**
 * `accel-agent eval`: graded operator tasks on the simulated facility
 * against the configured model, and `eval compare A B`. With `--replay` the
 * model's endpoint is a replay server that answers attempt N of task T at
 * `<base URL>/T/N/v1`: its host is the configured one, so the launcher's
 * network grant covers it.
 * A progress bar on stderr when it is a terminal; the report on stdout;
 * `--json` / `--out FILE` the whole record.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { loadConfig, resolveModel } from "../../config/mod.ts";
import { homeProblem } from "../../config/paths.ts";
import { compareReports, comparisonText, parseReport } from "../../eval/compare.ts";
import { buildReport, reportText } from "../../eval/report.ts";
import { runEval } from "../../eval/runner.ts";
import { DEFAULT_TASKS_URL, loadTasks, selectTasks } from "../../eval/task.ts";
import { missingModelSetup } from "../../config/mod.ts";
import { CliError, Exit, UsageError } from "../../app/exit.ts";
import { writePrivateFile } from "../../util/private_files.ts";
import { abortOnSignals, cancelledBy, type Io } from "../../app/io.ts";
import { progressLine } from "../term/eval_progress.ts";
import { terminalJson, untrusted } from "../../util/untrusted_text.ts";
import { errorMessage } from "../../util/errors.ts";
import { isRefusal, readRegularText } from "../../util/bounded_read.ts";

/** The largest eval report read back (every attempt's record: thousands of attempts). */
const MAX_REPORT_BYTES = 256 << 20;

export const EVAL_USAGE = `Usage:
  accel-agent eval [--model NAME] [--repeat N] [--tasks ID|GLOB|CATEGORY[,…]] [--concurrency K]
                   [--tasks-dir DIR]… [--json] [--out FILE] [--replay]
  accel-agent eval compare A.json B.json [--json]`;

const OPTIONS = {
  config: { type: "string", short: "c" },
  model: { type: "string", short: "m" },
  repeat: { type: "string" },
  tasks: { type: "string" },
  "tasks-dir": { type: "string", multiple: true },
  concurrency: { type: "string" },
  json: { type: "boolean" },
  out: { type: "string" },
  replay: { type: "boolean" },
  "no-color": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

/** Runs `eval …` (the arguments after `eval`); returns the exit code. */
export async function runEvalCommand(args: string[], io: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${errorMessage(e).split("\n")[0]}; see accel-agent eval --help`);
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    io.out(`${EVAL_USAGE}\n`);
    return Exit.OK;
  }
  if (positionals[0] === "compare") return await compare(positionals.slice(1), v.json ?? false, io);
  if (positionals.length) {
    throw new UsageError(`unexpected argument "${positionals[0]}"; see accel-agent eval --help`);
  }
  const repeat = count("--repeat", v.repeat, 1, 1000);
  const concurrency = count("--concurrency", v.concurrency, 1, 64);
  const loaded = await loadConfig({ path: v.config, env: { get: io.env }, cwd: io.cwd });
  const unset = homeProblem(loaded.config, io.env("HOME"));
  if (unset) throw new UsageError(`config error: ${unset}`);
  const model = v.model ?? loaded.config.llm.default;
  const info = resolveModel(loaded.config, model);
  const replay = v.replay ? info.baseUrl.replace(/\/+$/, "") : undefined;
  if (v.replay && !replay) {
    throw new UsageError(
      "--replay needs the replay server as the model's base URL (OPENAI_BASE_URL)",
    );
  }
  if (!replay) {
    const missing = missingModelSetup(info, { get: io.env });
    if (missing) throw new UsageError(missing);
  }
  let tasks;
  try {
    const dirs = [decodeURIComponent(DEFAULT_TASKS_URL.pathname), ...(v["tasks-dir"] ?? [])];
    tasks = selectTasks(await loadTasks(dirs.map((d) => absolute(d, io.cwd))), v.tasks);
  } catch (e) {
    if (e instanceof TypeError) throw new UsageError(e.message);
    throw e;
  }
  const controller = new AbortController();
  using _stop = abortOnSignals(controller, cancelledBy);
  const startedAt = new Date().toISOString();
  const bar = io.stderrIsTerminal;
  let passed = 0;
  const attempts = await runEval({
    tasks,
    repeat,
    concurrency,
    base: loaded,
    model,
    ...(replay
      ? { endpoint: (t, n) => Promise.resolve({ baseUrl: `${replay}/${t.id}/${n}/v1` }) }
      : {}),
    env: io.env,
    signal: controller.signal,
    onAttempt(rec, done, total) {
      if (rec.passed) passed++;
      if (bar) io.err(`\r${progressLine(done, total, passed, rec.task, io.columns())}`);
    },
  });
  if (bar) io.err("\n");
  const label = replay ? `${model} (replayed from ${replay})` : `${model} (${info.model})`;
  const report = buildReport(label, startedAt, repeat, attempts);
  const json = `${terminalJson(report)}\n`;
  // Printed first: a file that cannot be written (a full disk) loses nothing.
  // Reasons quote what the model proposed: shown with control characters escaped.
  io.out(v.json ? json : untrusted(reportText(report), { multiline: true }));
  if (v.out) {
    try {
      await writePrivateFile(absolute(v.out, io.cwd), json, { fixedTemp: true });
    } catch (e) {
      throw new CliError(
        `${untrusted(v.out)}: the report could not be written (${errorMessage(e)}); ` +
          `it is printed above${v.json ? "" : " (--json prints the whole record)"}`,
        Exit.FAILURE,
      );
    }
  }
  return controller.signal.aborted ? Exit.CANCELLED : Exit.OK;
}

async function compare(files: string[], json: boolean, io: Io): Promise<number> {
  if (files.length !== 2) {
    throw new UsageError("eval compare needs two files from eval --out: A.json B.json");
  }
  const reports = await Promise.all(files.map(async (f) => {
    let text;
    try {
      text = await readRegularText(absolute(f, io.cwd), MAX_REPORT_BYTES, {
        shown: f,
        fix: "give two files eval --out wrote",
      });
    } catch (e) {
      if (isRefusal(e)) throw new UsageError(e.message);
      throw new UsageError(`${f}: cannot read it (${errorMessage(e)})`);
    }
    try {
      return parseReport(text, f);
    } catch (e) {
      throw new UsageError(errorMessage(e));
    }
  }));
  const c = compareReports(reports[0]!, reports[1]!);
  io.out(
    json ? `${terminalJson(c)}\n` : untrusted(comparisonText(c), { multiline: true }),
  );
  return Exit.OK;
}

function count(flag: string, raw: string | undefined, min: number, max: number): number {
  if (raw === undefined) return min;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`${flag} needs a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}

function absolute(path: string, cwd: string): string {
  return path.startsWith("/") ? path : `${cwd}/${path}`;
}
