/**
 * ANSI styling that turns itself off when colour is off.
 *
 * @module
 */

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  italic(s: string): string;
  underline(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
  magenta(s: string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;

const ON: Style = {
  bold: wrap(1, 22),
  dim: wrap(2, 22),
  italic: wrap(3, 23),
  underline: wrap(4, 24),
  red: wrap(31, 39),
  green: wrap(32, 39),
  yellow: wrap(33, 39),
  cyan: wrap(36, 39),
  magenta: wrap(35, 39),
};

const id = (s: string) => s;
const OFF: Style = {
  bold: id,
  dim: id,
  italic: id,
  underline: id,
  red: id,
  green: id,
  yellow: id,
  cyan: id,
  magenta: id,
};

export function style(color: boolean): Style {
  return color ? ON : OFF;
}

/** Removes ANSI escapes, for width calculations and tests. */
export function stripAnsi(s: string): string {
  // deno-lint-ignore no-control-regex
  return s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
}
