/**
 * What a facility service answered, checked at the adapter boundary: a reply
 * is parsed as JSON and checked against a zod schema of the fields the
 * adapter uses, and anything else becomes one line about the service —
 * "ChannelFinder at URL answered an HTML page (status 502) where JSON was
 * expected", "… answered a list whose [0].name is a number, expected a list
 * of channels" — never a TypeError from deep inside the adapter.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { jsonReply, shaped } from "./reply.ts";
 * const svc = { label: "archiver", base: "http://arch:17668/retrieval", timeoutMs: 1000 };
 * const names = shaped(svc, z.array(z.string()), jsonReply(svc, '["SR:DCCT"]', 200), "a list of PV names");
 * ```
 *
 * @module
 */
import type { z } from "zod";
import { type ArrayPrefix, readJsonArrayPrefix } from "./capped_body.ts";
import type { HttpService } from "./capped_body.ts";

/** Whether a body is an HTML page (the error page of a proxy or servlet container). */
export function looksLikeHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html|<head|<body|<\?xml|<[a-z]+[\s>])/i.test(text.slice(0, 200));
}

/** A service's reply was not what its protocol promises. */
export class ReplyShapeError extends Error {
  override name = "ReplyShapeError";
}

/** "ChannelFinder at http://cf:8080/ChannelFinder/resources". */
function who(svc: Pick<HttpService, "label" | "base">): string {
  return `${svc.label} at ${svc.base}`;
}

/**
 * Parses a JSON reply. An HTML page, empty or non-JSON text throws a
 * {@link ReplyShapeError} naming the service and what it sent instead.
 * `lenient` maps the bare `NaN` / `Infinity` tokens the archiver writes to null.
 */
export function jsonReply(
  svc: Pick<HttpService, "label" | "base">,
  text: string,
  status: number,
  lenient = false,
): unknown {
  if (looksLikeHtml(text)) {
    throw new ReplyShapeError(
      `${
        who(svc)
      } answered an HTML page (status ${status}) where JSON was expected; check the URL in the config`,
    );
  }
  if (!text.trim()) {
    throw new ReplyShapeError(
      `${who(svc)} answered an empty body (status ${status}) where JSON was expected`,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    if (lenient) {
      try {
        return JSON.parse(
          text.replace(/(:\s*|\[\s*|,\s*)(-?Infinity|NaN)(?=\s*[,\]}])/g, "$1null"),
        );
      } catch { /* reported below */ }
    }
    throw new ReplyShapeError(
      `${who(svc)} answered text that is not JSON (status ${status}): ${snippet(text)}`,
    );
  }
}

/**
 * A reader for `httpRead` of a JSON list reply that keeps to a page: only the
 * first `maxItems` elements are read (the rest is dropped unread), within the
 * service's byte cap. A reply that is not a list is parsed by
 * {@link jsonReply} (an HTML page or non-JSON text is one line about the
 * service) and returned as `whole`, for the caller's schema to judge.
 */
export function jsonListPage(
  svc: HttpService,
  maxItems: number,
): (res: Response, url: string) => Promise<ArrayPrefix> {
  return async (res, url) => {
    try {
      return await readJsonArrayPrefix(
        res,
        svc,
        url,
        maxItems,
        (text) => jsonReply(svc, text, res.status),
      );
    } catch (e) {
      if (e instanceof SyntaxError && !e.message.startsWith(svc.label)) {
        throw new ReplyShapeError(
          `${who(svc)} answered a list that is not valid JSON (status ${res.status}): ${
            snippet(e.message)
          }`,
        );
      }
      throw e;
    }
  };
}

/** The parsed list reply of {@link jsonListPage}: its elements, or the whole non-list reply. */
export function pageBody(page: ArrayPrefix): unknown {
  return page.whole === undefined ? page.items : page.whole;
}

/**
 * Checks a parsed reply against `schema`. A mismatch throws a
 * {@link ReplyShapeError}: "<service> at <url> answered <what>, expected <expected>".
 */
export function shaped<T>(
  svc: Pick<HttpService, "label" | "base">,
  schema: z.ZodType<T>,
  body: unknown,
  expected: string,
): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  throw new ReplyShapeError(
    `${who(svc)} answered ${mismatch(body, r.error)}, expected ${expected}`,
  );
}

/** What a reply held where the schema wanted something else, in a few words. */
export function mismatch(body: unknown, error: z.ZodError): string {
  const path = deepestPath(error.issues);
  if (path.length === 0) return kindOf(body);
  let at: unknown = body;
  for (const key of path) {
    at = at !== null && typeof at === "object"
      ? (at as Record<PropertyKey, unknown>)[key as PropertyKey]
      : undefined;
  }
  const where = path.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("")
    .replace(/^\./, "");
  return `${kindOf(body)} whose ${where} is ${at === undefined ? "missing" : kindOf(at)}`;
}

/**
 * Where the first issue is; for a union (Olog's list or `{logs}`), the path
 * into the branch that got furthest, which is the one the service meant.
 */
function deepestPath(issues: readonly z.core.$ZodIssue[]): PropertyKey[] {
  const issue = issues[0];
  if (!issue) return [];
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return [...issue.path];
  const branches = issue.errors.map(deepestPath);
  const best = branches.reduce((a, b) => (b.length > a.length ? b : a));
  return [...issue.path, ...best];
}

/** "nothing", "a list", "an object", "the number 5", "the text \"abc\"", "null". */
export function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (v === undefined) return "nothing";
  if (Array.isArray(v)) return "a list";
  switch (typeof v) {
    case "object":
      return "an object";
    case "string":
      return `the text ${JSON.stringify(snippet(v))}`;
    case "number":
    case "boolean":
      return `${typeof v === "number" ? "the number" : "the boolean"} ${String(v)}`;
    default:
      return typeof v;
  }
}

/** The first 80 characters of a text, on one line. */
export function snippet(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > 80 ? `${one.slice(0, 80)}…` : one;
}
