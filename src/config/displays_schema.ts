/**
 * The `[[displays]]` catalogue (the facility's operator screens) and the
 * `[launchers.KIND]` tables (the program that opens each kind). A display
 * names a file or a URL, the macros it takes, and the words it is found by.
 *
 * @module
 */
import { z } from "zod";

/** The kinds of display a launcher exists for. */
export const DISPLAY_KINDS = ["phoebus", "edm", "caqtdm", "web"] as const;
export type DisplayKind = typeof DISPLAY_KINDS[number];

/** The kind a file's extension stands for. */
export function kindOfFile(file: string): DisplayKind | undefined {
  const ext = /\.([A-Za-z]+)$/.exec(file)?.[1]?.toLowerCase();
  if (ext === "bob" || ext === "opi") return "phoebus";
  if (ext === "edl") return "edm";
  if (ext === "ui" || ext === "adl") return "caqtdm";
  return undefined;
}

/** A macro name as the display tools read them: letters, digits and `_`. */
const MACRO_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Whether `pattern` compiles as a regular expression. */
function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
  }
}

export const MacroSpecSchema = z.strictObject({
  /** What the macro selects, for the model and `/display`. */
  description: z.string().default(""),
  /** The only values allowed, when given. */
  values: z.array(z.string().min(1)).optional(),
  /** A regular expression the whole value must match, when given. */
  pattern: z.string().refine(compiles, "not a valid regular expression").optional(),
  /** The value when the request gives none; a macro without one must be given. */
  default: z.string().optional(),
});

export const DisplaySchema = z.strictObject({
  name: z.string().regex(/^[\w.-]{1,64}$/, "letters, digits, _ . - only"),
  /** A display file (relative to the config file) … */
  file: z.string().min(1).optional(),
  /** … or a web display's address. */
  url: z.url({ protocol: /^https?$/ }).optional(),
  /** Default: web for a URL; by extension for a file (.bob/.opi phoebus, .edl edm, .ui/.adl caqtdm). */
  kind: z.enum(DISPLAY_KINDS).optional(),
  description: z.string().default(""),
  keywords: z.array(z.string().min(1)).default([]),
  macros: z.record(
    z.string().regex(MACRO_NAME, "a macro name is letters, digits and _"),
    MacroSpecSchema,
  )
    .default({}),
}).refine((d) => (d.file === undefined) !== (d.url === undefined), {
  message: "a display names either file or url",
}).refine((d) => d.kind !== undefined || d.url !== undefined || kindOfFile(d.file ?? ""), {
  message:
    'cannot tell the kind from the file\'s extension; set kind = "phoebus", "edm", "caqtdm" or "web"',
});

/**
 * How one kind of display is opened: an argv template, never a shell line.
 * `{file}` is the display's file or URL, `{macros}` the macros in the
 * kind's form: "query" `A=1&B=2` (URL-encoded; Phoebus, web) or "comma"
 * `A=1,B=2` (EDM, caQtDM).
 */
const launcher = (command: string[], macroFormat: "query" | "comma") =>
  z.strictObject({
    command: z.array(z.string().min(1)).min(1).default(command),
    macro_format: z.enum(["query", "comma"]).default(macroFormat),
  }).prefault({});

/** The launchers, with defaults that follow each program's documented command line. */
export const LaunchersSchema = z.strictObject({
  phoebus: launcher(["phoebus", "-resource", "{file}?{macros}"], "query"),
  edm: launcher(["edm", "-x", "-m", "{macros}", "{file}"], "comma"),
  caqtdm: launcher(["caQtDM", "-macro", "{macros}", "{file}"], "comma"),
  web: launcher(["xdg-open", "{file}?{macros}"], "query"),
}).prefault({});

export type DisplayEntry = z.infer<typeof DisplaySchema>;
export type MacroSpec = z.infer<typeof MacroSpecSchema>;
export type Launchers = z.infer<typeof LaunchersSchema>;
export type Launcher = Launchers[DisplayKind];
