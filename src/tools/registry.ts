/**
 * The set of tools offered to the model, implementing the loop's
 * {@link ToolSet}. It validates, coerces, times out, catches and truncates in
 * one place for every tool.
 *
 * @module
 */
import type { AgentEvent } from "../agent/events.ts";
import type { CallScope, ToolOutcome, ToolSet } from "../agent/tools.ts";
import type { ToolSpec } from "../llm/types.ts";
import type { Tool, ToolDeps } from "./define.ts";
import { type SaveFullOutput, truncatedResult } from "./full_output.ts";
import { truncateMiddle } from "./truncate.ts";
import { parseJsonArgs, validateArgs } from "./validate.ts";
import { errorMessage } from "../util/errors.ts";
import { markOutsideText, newDataNonce } from "../agent/outside_text.ts";

export interface RegistryOptions {
  /** Characters of tool output the model sees (head and tail kept). */
  maxOutputChars: number;
  /** A call that takes longer is abandoned and reported as timed out. */
  timeoutMs: number;
  /**
   * Saves the whole text of a result that was cut for the model; the
   * outcome's `result` then names the file. Without it the whole is not kept.
   */
  saveFullOutput?: SaveFullOutput;
  /** The id of the data blocks that hold service text (default: a fresh random one). */
  dataNonce?: string;
}

export class ToolRegistry implements ToolSet {
  readonly #tools: Map<string, Tool>;
  readonly #deps: ToolDeps;
  readonly #opts: RegistryOptions & { dataNonce: string };

  constructor(tools: Tool[], deps: ToolDeps, opts: RegistryOptions) {
    this.#tools = new Map(tools.map((t) => [t.name, t]));
    this.#deps = deps;
    this.#opts = { ...opts, dataNonce: opts.dataNonce ?? newDataNonce() };
  }

  list(): Tool[] {
    return [...this.#tools.values()];
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  /** A registry offering only the named tools; unknown names are an error. */
  subset(names: readonly string[]): ToolRegistry {
    const missing = names.filter((n) => !this.#tools.has(n));
    if (missing.length) {
      throw new RangeError(
        `unknown tools: ${missing.join(", ")}; known: ${this.names().join(", ")}`,
      );
    }
    return new ToolRegistry(names.map((n) => this.#tools.get(n) as Tool), this.#deps, this.#opts);
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  specs(): ToolSpec[] {
    return this.list().map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    }));
  }

  isReadOnly(name: string): boolean {
    return this.#tools.get(name)?.readOnly ?? false;
  }

  awaitsCompletion(name: string): boolean {
    return this.#tools.get(name)?.awaitsCompletion ?? false;
  }

  previewArgs(_name: string, rawArgs: string): unknown {
    const parsed = parseJsonArgs(rawArgs);
    return parsed.ok ? parsed.args : rawArgs;
  }

  async execute(
    name: string,
    rawArgs: string,
    signal: AbortSignal,
    emit: (ev: AgentEvent) => void = () => {},
    scope?: CallScope,
  ): Promise<ToolOutcome> {
    const tool = this.#tools.get(name);
    if (!tool) {
      return this.#fail(
        rawArgs,
        `unknown tool "${name}"; the available tools are ${this.names().join(", ")}`,
      );
    }
    const json = parseJsonArgs(rawArgs);
    if (!json.ok) return this.#fail(rawArgs, `${name}: ${json.error}`);
    const outcome = await this.#run(tool, json.args, signal, emit, scope);
    if (!tool.outsideText) return outcome;
    return { ...outcome, content: markOutsideText(outcome.content, name, this.#opts.dataNonce) };
  }

  async #run(
    tool: Tool,
    args: unknown,
    signal: AbortSignal,
    emit: (ev: AgentEvent) => void,
    scope: CallScope | undefined,
  ): Promise<ToolOutcome> {
    const name = tool.name;
    let valid;
    try {
      valid = validateArgs(tool.schema, tool.normalise ? tool.normalise(args) : args);
    } catch (e) {
      // What the model sent, however odd, is its mistake to read about, not a crash of the turn.
      return this.#fail(args, `${name}: the arguments could not be checked (${errorMessage(e)})`);
    }
    if (!valid.ok) {
      return this.#fail(
        args,
        `${name}: ${valid.error}. Schema: ${JSON.stringify(tool.parameters)}`,
      );
    }
    // A tool that awaits completion handles the signal itself and is bounded by its own limits.
    const timeout = tool.awaitsCompletion
      ? new AbortController().signal
      : AbortSignal.timeout(this.#opts.timeoutMs);
    const combined = AbortSignal.any([signal, timeout]);
    try {
      const running = tool.execute(valid.args, {
        ...this.#deps,
        signal: combined,
        emit,
        ...(scope ? { scope } : {}),
      });
      const result = await (tool.awaitsCompletion ? running : raceAbort(running, combined));
      const json = JSON.stringify(result) ?? "null";
      const content = truncateMiddle(json, this.#opts.maxOutputChars);
      if (content === json) return { ok: true, content, result, args: valid.args };
      // Events and --json carry what the model read, not the whole (which goes to a file).
      const saved = await this.#opts.saveFullOutput?.(name, json);
      const shown = truncatedResult(result, json, content, saved);
      return { ok: true, content, result: shown, fullResult: result, args: valid.args };
    } catch (e) {
      if (timeout.aborted && !signal.aborted) {
        return this.#fail(valid.args, `${name} timed out after ${this.#opts.timeoutMs / 1000} s`);
      }
      const message = errorMessage(e);
      return this.#fail(valid.args, `${name} failed: ${message}`);
    }
  }

  #fail(args: unknown, error: string): ToolOutcome {
    const content = truncateMiddle(JSON.stringify({ error }), this.#opts.maxOutputChars);
    return {
      ok: false,
      content,
      result: { error: truncateMiddle(error, this.#opts.maxOutputChars) },
      args,
    };
  }
}

/** Rejects as soon as the signal aborts, even when `p` ignores the signal. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
