/**
 * Loads and validates the configuration: TOML file → zod schema → environment
 * overrides. Errors are {@link ConfigError}s whose message is one line naming
 * the file, the position or key, and what is expected.
 *
 * @module
 */
import { parse, TomlError } from "smol-toml";
import type { z } from "zod";
import { type Config, ConfigSchema } from "./schema.ts";
import { valueAt } from "../util/misc.ts";
import { keyLines } from "./layers.ts";

/** A configuration problem the operator must fix; the CLI exits 2 on it. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Where the configuration came from, for messages and relative paths. */
export interface LoadedConfig {
  config: Config;
  /** Absolute path of the file read, or undefined when defaults were used. */
  path?: string;
  /** Directory that relative paths in the file are resolved against. */
  baseDir: string;
  /** SHA-256 of the file's bytes (or of "" for defaults), for the audit log. */
  hash: string;
  /** Every file of the chain, the shipped defaults first and the file named last. */
  layers: { path: string; shown: string }[];
  /** Where each value was set, by dotted key (`file:line`, `environment NAME`); others are built in. */
  origins: Map<string, string>;
}

/** Parses and validates TOML text. `source` names the file in messages. */
export function parseConfig(text: string, source: string): Config {
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (e) {
    if (e instanceof TomlError) {
      const first = e.message.split("\n")[0] ?? "";
      throw new ConfigError(`${source}:${e.line}:${e.column}: invalid TOML: ${first}`);
    }
    throw e;
  }
  return validateConfig(raw, text, source);
}

/**
 * Validates parsed TOML against the schema; a problem is one line naming
 * `source`, the line of the key in `text` (when known), the key and what is expected.
 */
export function validateConfig(raw: unknown, text: string | undefined, source: string): Config {
  const result = ConfigSchema.safeParse(raw);
  if (result.success) return result.data;
  const issues = result.error.issues;
  const first = issues[0];
  if (!first) throw new ConfigError(`${source}: invalid configuration`);
  const path = first.path.map(String);
  const line = text === undefined ? undefined : locateKey(
    text,
    first.code === "unrecognized_keys" ? [...path, first.keys[0] ?? ""] : path,
  );
  const where = line ? `${source}:${line}` : source;
  const more = issues.length > 1
    ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? "s" : ""})`
    : "";
  return throwIssue(where, first, raw, more);
}

function throwIssue(where: string, issue: z.core.$ZodIssue, raw: unknown, more: string): never {
  const key = issue.path.map(String).join(".");
  const label = key ? ` key ${key}:` : "";
  throw new ConfigError(`${where}:${label} ${describeIssue(issue, raw)}${more}`);
}

function describeIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  const got = valueAt(raw, issue.path);
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}, got ${describeValue(got)}`;
    case "unrecognized_keys":
      return `unknown key${issue.keys.length > 1 ? "s" : ""} ${
        issue.keys.map((k) => `"${k}"`).join(", ")
      }; check the spelling against configs/default.toml`;
    case "invalid_union":
      return `expected a model id string or a table with model = "…", got ${describeValue(got)}`;
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${
        describeValue(got)
      }`;
    case "too_small":
      return `must be ${issue.inclusive ? "at least" : "greater than"} ${issue.minimum}, got ${
        describeValue(got)
      }`;
    case "too_big":
      return `must be ${issue.inclusive ? "at most" : "less than"} ${issue.maximum}, got ${
        describeValue(got)
      }`;
    case "custom":
      // A refinement's message says what is wrong; the value may be a secret.
      return issue.message;
    default:
      return `${issue.message}, got ${describeValue(got)}`;
  }
}

function describeValue(v: unknown): string {
  if (v === undefined) return "nothing";
  if (typeof v === "string") return `the string ${JSON.stringify(v)}`;
  if (Array.isArray(v)) return "an array";
  if (v instanceof Date) return "a date";
  if (typeof v === "object" && v !== null) return "a table";
  return `${typeof v} ${String(v)}`;
}

/**
 * Finds the 1-based line where a dotted key is defined in TOML text: a
 * `key =` line inside the right `[table]`, a dotted `a.b = ` line, or the
 * table header itself. Returns undefined when it cannot tell (inline tables).
 */
export function locateKey(text: string, path: readonly string[]): number | undefined {
  if (path.length === 0) return undefined;
  return keyLines(text).get(path.join("."));
}
