/**
 * `search_device`: find device names in the facility's namespace.
 *
 * @module
 */
import { z } from "zod";
import { defineTool } from "./define.ts";

const Parameters = z.strictObject({
  pattern: z.string().min(1).describe(
    'Name pattern with * and ? wildcards matched against the whole name, e.g. "LINAC:BPM:*:X"; ' +
      "without wildcards it matches names containing the text",
  ),
  subsystem: z.string().optional().describe(
    "Only this subsystem (first name segment), e.g. LINAC, RING, RF, DIAG",
  ),
  writable: z.boolean().optional().describe(
    "true: only settable devices; false: only read-only ones",
  ),
  limit: z.int().min(1).max(200).default(50).describe("Names per page"),
  offset: z.int().min(0).default(0).describe("Skip this many matches (paging)"),
});

export const searchDevice = defineTool({
  name: "search_device",
  description:
    "Search the device namespace by wildcard pattern, optionally within a subsystem. Returns one page " +
    "of names with description, units and writability (and for a writable device the readback device " +
    "that confirms its writes, when the catalogue names one), plus the total number of matches.",
  parameters: Parameters,
  readOnly: true,
  async execute({ pattern, subsystem, writable, limit, offset }, { cs, signal }) {
    const glob = /[*?]/.test(pattern) ? pattern : `*${pattern}*`;
    const page = await cs.search({ pattern: glob, subsystem, writable, limit, offset }, signal);
    // Whatever the backend sent, a page is never longer than asked for.
    const devices = page.devices.slice(0, limit);
    const note = page.note ??
      (page.devices.length > limit
        ? `the backend sent ${page.devices.length} names for a page of ${limit}; the first ${limit} are shown`
        : undefined);
    const next = page.offset + devices.length;
    return {
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
  },
});
