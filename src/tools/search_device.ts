/**
 * `search_device`: find device names in the facility's namespace, by
 * pattern or by an operator's words (the rule is in `src/index/mode.ts`).
 *
 * @module
 */
import { z } from "zod";
import { defineTool, type ToolContext, ToolError } from "./define.ts";
import { type SearchMode, searchModeOf } from "../index/mode.ts";
import { nameRegex, type NameTest, UnboundedRegex } from "../index/linear_regex.ts";
import type { DeviceIndex } from "../index/device_index.ts";
import { informalResult, type SearchDeviceResult } from "./search_words.ts";
import { errorMessage } from "../util/errors.ts";
import { CacheDamage } from "../index/file_store.ts";

export type { PatternDevice, SearchDeviceResult } from "./search_words.ts";

/** The ranking and family modules, loaded on the first search (not at start-up). */
const ranking = () => Promise.all([import("../index/query.ts"), import("../index/families.ts")]);

const Parameters = z.strictObject({
  pattern: z.string().min(1).describe(
    'What to find: a name pattern with * and ? wildcards over the whole name ("LINAC:BPM:*:X"), ' +
      'a regular expression between slashes ("/^RING:BPM:0[1-5]:X$/"), a piece of a name with a ' +
      'colon ("RING:BPM"), or plain words ("horizontal steerers in the linac", "ion pump ' +
      'pressure cell 4", "bpm 11 turn by turn"), which are ranked by relevance',
  ),
  mode: z.enum(["auto", "pattern", "informal"]).default("auto").describe(
    "auto: decide from the text (wildcards, /regex/ or a colon in one word mean a pattern); " +
      "pattern: always a pattern (text without wildcards matches names containing it); " +
      "informal: always ranked words",
  ),
  subsystem: z.string().optional().describe(
    "Only this subsystem (first name segment), e.g. LINAC, RING, RF, DIAG",
  ),
  writable: z.boolean().optional().describe(
    "true: only settable devices; false: only read-only ones",
  ),
  properties: z.record(z.string(), z.string()).optional().describe(
    'Property name → * ? glob its value must match, e.g. {"cell": "4", "kind": "setpoint"} ' +
      "(ChannelFinder properties; the simulator has section, family, index, plane, signal, " +
      "kind, cell, units)",
  ),
  tags: z.array(z.string()).optional().describe(
    'Tags (globs) every device must carry, e.g. ["writable"]',
  ),
  limit: z.int().min(1).max(200).default(50).describe("Names per page"),
  offset: z.int().min(0).default(0).describe("Skip this many matches (paging)"),
});

type Args = z.output<typeof Parameters>;

type ResultOf<M extends SearchDeviceResult["mode"]> = Extract<SearchDeviceResult, { mode: M }>;

export const searchDevice = defineTool<typeof Parameters, SearchDeviceResult>({
  name: "search_device",
  description:
    "Search the device namespace by pattern or by plain words or a whole question (synonyms, " +
    "abbreviations, planes, cells, numbers bound to their word, lists and ranges, 'the second', " +
    "'the last three', 'actual'/'requested'/'what can I adjust' understood; misspellings " +
    "corrected). Returns one page of names with description, units and writability (and for a " +
    "writable device the readback device that confirms its writes, when the catalogue names " +
    "one) and the total number of matches; word searches are ranked, each result with its " +
    "score and the terms it matched. A word search returns only devices that are everything " +
    "asked for: when none is, it returns none, names the term nothing satisfied, and gives the " +
    "nearest devices apart as suggestions (not an answer). Pattern searches that match nothing " +
    "name the nearest device families.",
  parameters: Parameters,
  readOnly: true,
  outsideText: "facility services (names, descriptions, units)",
  async execute(args, ctx) {
    try {
      return await search(args, ctx);
    } catch (e) {
      // A cache file damaged where its header could not tell: built again, and asked again.
      if (!(e instanceof CacheDamage) || !ctx.devices?.refresh) throw e;
      await ctx.devices.refresh(ctx.signal);
      return await search(args, ctx);
    }
  },
});

async function search(args: Args, ctx: ToolContext): Promise<SearchDeviceResult> {
  const mode: SearchMode = args.mode === "auto"
    ? searchModeOf(args.pattern)
    : args.mode === "informal"
    ? "informal"
    : searchModeOf(args.pattern) === "regex"
    ? "regex"
    : "pattern";
  if (mode === "informal") return await informal(args, ctx);
  const result = mode === "regex" ? await regex(args, ctx) : await pattern(args, ctx);
  if (result.total === 0) {
    const index = await indexOrUndefined(ctx);
    if (index) {
      const [, { nearestFamilies }] = await ranking();
      return { ...result, nearest_families: nearestFamilies(index, args.pattern) };
    }
  }
  return result;
}

async function pattern(
  { pattern, subsystem, writable, properties, tags, limit, offset }: Args,
  { cs, signal }: ToolContext,
): Promise<ResultOf<"pattern">> {
  const glob = /[*?]/.test(pattern) ? pattern : `*${pattern}*`;
  const page = await cs.search(
    { pattern: glob, subsystem, writable, properties, tags, limit, offset },
    signal,
  );
  // Whatever the backend sent, a page is never longer than asked for.
  const devices = page.devices.slice(0, limit);
  const note = page.note ??
    (page.devices.length > limit
      ? `the backend sent ${page.devices.length} names for a page of ${limit}; the first ${limit} are shown`
      : undefined);
  const next = page.offset + devices.length;
  return {
    mode: "pattern",
    total: page.total,
    offset: page.offset,
    ...(note ? { note } : {}),
    devices: devices.map((d) => ({
      name: d.device,
      description: d.description,
      units: d.units,
      writable: d.writable,
      // The device whose reading confirms a write to this one, when the catalogue names it.
      ...(d.writable && d.readback ? { readback: d.readback } : {}),
    })),
    ...(next < page.total ? { next_offset: next } : {}),
  };
}

async function regex(
  { pattern, subsystem, writable, properties, tags, limit, offset }: Args,
  ctx: ToolContext,
): Promise<ResultOf<"regex">> {
  let re: NameTest;
  try {
    re = await nameRegex(pattern);
  } catch (e) {
    throw new ToolError(`${pattern}: not a valid regular expression (${errorMessage(e)})`);
  }
  const index = await needIndex(ctx, "a regular expression");
  let page;
  try {
    page = index.match({ regex: re, subsystem, writable, properties, tags, offset, limit });
  } catch (e) {
    if (e instanceof UnboundedRegex) throw new ToolError(e.message);
    throw e;
  }
  const next = page.offset + page.devices.length;
  return {
    mode: "regex",
    total: page.total,
    offset: page.offset,
    devices: page.devices,
    ...(next < page.total ? { next_offset: next } : {}),
  };
}

async function informal(
  { pattern, subsystem, writable, properties, tags, limit, offset }: Args,
  ctx: ToolContext,
): Promise<ResultOf<"informal">> {
  const index = await needIndex(ctx, "a search by words");
  const [{ rankedSearch }] = await ranking();
  const page = rankedSearch(index, pattern, {
    subsystem,
    writable,
    properties,
    tags,
    limit,
    offset,
  });
  return informalResult(page);
}

async function indexOrUndefined(ctx: ToolContext): Promise<DeviceIndex | undefined> {
  return ctx.devices ? await ctx.devices.index(ctx.signal) : undefined;
}

async function needIndex(ctx: ToolContext, what: string): Promise<DeviceIndex> {
  const index = await indexOrUndefined(ctx);
  if (!index) {
    throw new ToolError(
      `${what} needs the device index, which this backend does not provide; search with a * ? pattern`,
    );
  }
  return index;
}
