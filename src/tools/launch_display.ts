/**
 * `launch_display`: opens one of the facility's operator screens from the
 * configured catalogue, with its macros checked, through the configured
 * launcher, detached. It changes nothing on the machine, so it needs no
 * plan; the result says exactly what was started (argv and pid). Without a
 * display it lists the catalogue.
 *
 * @module
 */
import { z } from "zod";
import { type Display, type DisplayCatalogue, DisplayError } from "../displays/catalogue.ts";
import type { Spawn } from "../displays/launch.ts";
import { defineTool, type Tool, ToolError } from "./define.ts";

/** The catalogue, the way to start a launcher, and how often displays may be opened. */
export interface DisplayDeps {
  catalogue: DisplayCatalogue;
  spawn: Spawn;
  /** Absent: no limit (tests of the catalogue alone). */
  gate?: LaunchGate;
}

/** How often the model may open displays. */
export interface LaunchLimits {
  /** Displays opened in one turn of the agent. */
  perTurn: number;
  /** A display opened is not opened again within this many milliseconds. */
  relaunchMs: number;
}

/**
 * Counts the displays opened: each display at most once within
 * `relaunchMs`, and at most `perTurn` in one turn. A model that asks for the
 * same screen two thousand times in one message opens it once.
 */
export class LaunchGate {
  #turn: string | undefined;
  #inTurn = 0;
  readonly #opened = new Map<string, number>();

  constructor(readonly limits: LaunchLimits, readonly now: () => number = Date.now) {}

  /** Why `display` may not be opened now, or undefined when it may. */
  refusal(display: string, turn: string | undefined): string | undefined {
    const at = this.#opened.get(display);
    const ago = at === undefined ? Infinity : this.now() - at;
    if (ago < this.limits.relaunchMs) {
      return `${display} was opened ${Math.round(ago / 1000)} s ago and is not opened again ` +
        `within ${this.limits.relaunchMs / 1000} s ([agent] display_relaunch_s); it is on the ` +
        "operator's screen already";
    }
    if (turn !== undefined && turn === this.#turn && this.#inTurn >= this.limits.perTurn) {
      return `this turn has opened ${this.#inTurn} displays, the most one turn may ` +
        "([agent] max_display_launches_per_turn); tell the operator which others to open";
    }
    return undefined;
  }

  /** Counts a display that was opened. */
  opened(display: string, turn: string | undefined): void {
    this.#opened.set(display, this.now());
    if (turn === undefined) return;
    if (turn !== this.#turn) {
      this.#turn = turn;
      this.#inTurn = 0;
    }
    this.#inTurn++;
  }
}

const Parameters = z.strictObject({
  display: z.string().max(200).optional().describe(
    'The display\'s name, or words from its keywords or description (e.g. "orbit", "rf cavity"); ' +
      "omit to list the catalogue",
  ),
  macros: z.record(z.string(), z.string().max(256)).optional().describe(
    'Macro values, e.g. {"SECTOR": "03"}; only the macros the catalogue lists for the display, ' +
      "within their allowed values; others take their defaults",
  ),
});

/** What the model and `--json` read of a display. */
export function displayView(d: Display) {
  return {
    name: d.name,
    kind: d.kind,
    target: d.target,
    description: d.description,
    keywords: d.keywords,
    macros: Object.fromEntries(
      Object.entries(d.macros).map(([k, m]) => [k, {
        ...(m.description ? { description: m.description } : {}),
        ...(m.values ? { values: m.values } : {}),
        ...(m.pattern ? { pattern: m.pattern } : {}),
        ...(m.default !== undefined ? { default: m.default } : {}),
      }]),
    ),
  };
}

/** A display as the model and `--json` read it. */
export type DisplayView = ReturnType<typeof displayView>;

/** The catalogue (no display asked for), or exactly what was started. */
export type LaunchDisplayResult =
  | { displays: DisplayView[] }
  | {
    launched: {
      display: string;
      kind: string;
      target: string;
      macros: Record<string, string>;
      argv: string[];
      pid: number;
    };
  };

/** The tool over the catalogue `deps()` returns at call time (none: no displays configured). */
export function launchDisplayTool(
  deps: () => DisplayDeps | undefined = () => undefined,
): Tool<LaunchDisplayResult> {
  return defineTool<typeof Parameters, LaunchDisplayResult>({
    name: "launch_display",
    description:
      "Open one of the facility's operator screens (Phoebus, EDM, caQtDM or web) on the operator's " +
      "console, by name or keyword, with its macros. It changes nothing on the machine and needs no " +
      "plan. Call it without a display to list the catalogue and each display's macros. An ambiguous " +
      "keyword returns the matching names: ask or pick one, never guess. A display is opened once; " +
      "it is not opened again for a while, and only a few are opened in one turn.",
    parameters: Parameters,
    readOnly: true,
    execute({ display, macros }, { scope }) {
      const d = deps();
      if (!d || !d.catalogue.displays.length) {
        throw new ToolError("no displays are configured; add [[displays]] to the config file");
      }
      try {
        if (display === undefined || display.trim() === "") {
          return Promise.resolve({ displays: d.catalogue.displays.map(displayView) });
        }
        const found = d.catalogue.find(display);
        const spec = d.catalogue.plan(found, macros ?? {});
        // Checked, started and counted with no await between: concurrent calls cannot all pass.
        const refused = d.gate?.refusal(found.name, scope?.turn);
        if (refused) throw new ToolError(refused);
        const launched = d.spawn(spec.argv);
        d.gate?.opened(found.name, scope?.turn);
        return Promise.resolve({
          launched: {
            display: found.name,
            kind: found.kind,
            target: found.target,
            macros: spec.macros,
            argv: launched.argv,
            pid: launched.pid,
          },
        });
      } catch (e) {
        if (e instanceof DisplayError) throw new ToolError(e.message);
        throw e;
      }
    },
  });
}
