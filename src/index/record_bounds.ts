/**
 * What the index keeps of one device's record, at most, and the record cut
 * to it: names, descriptions, units, properties and tags from a service are
 * bounded before the builder reads them.
 *
 * @module
 */
import type { IndexRecord } from "./record.ts";

/**
 * What the index keeps of one device, at most: a service may send records of
 * any size within its body cap (ChannelFinder pages of 16 MiB, a thousand
 * channels of 14 KB each grew the process past 4 GB), so longer texts are
 * cut, further properties and tags left out, and the whole is bounded.
 * EPICS descriptions hold 40 characters; TANGO's are a sentence or two.
 */
export const MAX_NAME_CHARS = 1024;
export const MAX_DESCRIPTION_CHARS = 512;
/** A property's key or value, a units string, a tag. */
export const MAX_VALUE_CHARS = 256;
/** Properties, and tags, of one device. */
export const MAX_PROPERTIES = 64;
/** Characters of names, descriptions, units, properties and tags of the whole index. */
export const MAX_TEXT_CHARS = 256 * 1024 * 1024;

/**
 * `text` cut to `n` characters (never half a surrogate pair), as a string of
 * its own: a slice would keep the whole original alive. Texts within `n` are
 * kept as they are (copying every one made a build of a million devices
 * half again as slow).
 */
function cut(text: string, n: number): string {
  if (text.length <= n) return text;
  let kept = text.slice(0, n);
  const last = kept.charCodeAt(kept.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) kept = kept.slice(0, -1);
  // A slice of a concatenation is a slice of a fresh copy, not of the original.
  return ` ${kept}`.slice(1);
}

/** A record within the caps above, and the characters of it the index keeps. */
export function bounded(rec: IndexRecord): { rec: IndexRecord; chars: number } {
  let chars = rec.name.length;
  const description = cut(rec.description, MAX_DESCRIPTION_CHARS);
  const units = cut(rec.units, MAX_VALUE_CHARS);
  chars += description.length + units.length;
  let properties = rec.properties;
  let count = 0;
  let within = true;
  for (const key in properties) {
    const value = properties[key] ?? "";
    if (
      ++count > MAX_PROPERTIES || key.length > MAX_VALUE_CHARS || value.length > MAX_VALUE_CHARS
    ) {
      within = false;
      break;
    }
    chars += key.length + value.length;
  }
  if (!within) {
    properties = {};
    chars = rec.name.length + description.length + units.length;
    for (const [key, value] of Object.entries(rec.properties).slice(0, MAX_PROPERTIES)) {
      const k = cut(key, MAX_VALUE_CHARS), v = cut(value, MAX_VALUE_CHARS);
      properties[k] = v;
      chars += k.length + v.length;
    }
  }
  let tags = rec.tags;
  if (tags.length > MAX_PROPERTIES || tags.some((t) => t.length > MAX_VALUE_CHARS)) {
    tags = tags.slice(0, MAX_PROPERTIES).map((t) => cut(t, MAX_VALUE_CHARS));
  }
  for (const t of tags) chars += t.length;
  return {
    rec: { name: rec.name, description, units, writable: rec.writable, properties, tags },
    chars,
  };
}

/** Refuses a name past {@link MAX_NAME_CHARS} or holding a line break, naming `sourceId`. */
export function checkName(name: string, sourceId: string): void {
  if (name.length > MAX_NAME_CHARS) {
    throw new RangeError(
      `device index: a name from ${sourceId} is longer than ${MAX_NAME_CHARS} characters ` +
        `(${JSON.stringify(name.slice(0, 80))}…)`,
    );
  }
  if (/[\n\r]/.test(name)) {
    throw new Error(
      `device index: ${JSON.stringify(name)} from ${sourceId} holds a line break`,
    );
  }
}
