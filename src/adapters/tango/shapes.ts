/**
 * The TANGO REST replies (spec §h) the adapter relies on, as zod schemas
 * checked at the boundary, and the check of a value against its attribute's
 * declared type: a DevDouble sent as `"1.5abc"` is an error naming the
 * attribute, never a VALID reading.
 *
 * @module
 */
import { z } from "zod";
import type { Value } from "../adapter.ts";

/** Strings in the spec; some servers serialise numbers for limits. */
const text = z.union([z.string(), z.number()]).transform(String).nullish().transform((v) =>
  v ?? undefined
);

/** A TANGO attribute's static description (AttributeInfoEx), the fields used. */
export const AttrInfoSchema = z.object({
  name: z.string().optional(),
  writable: text,
  data_format: text,
  data_type: text,
  label: text,
  unit: text,
  description: text,
  min_value: text,
  max_value: text,
  min_alarm: text,
  max_alarm: text,
  enum_label: z.array(z.string()).nullish().transform((v) => v ?? undefined),
  /** READ_WITH_WRITE: the WRITE attribute whose set value this one reads back. */
  writable_attr_name: text,
});

/** One element of a value read or write: a value object, or an error in its place. */
export const AttrValueSchema = z.object({
  name: z.string().optional(),
  value: z.unknown().optional(),
  quality: z.string().optional(),
  timestamp: z.number().optional(),
  errors: z.array(z.unknown()).optional(),
  reason: z.string().optional(),
  desc: z.string().optional(),
  description: z.string().optional(),
});
export type AttrValue = z.infer<typeof AttrValueSchema>;

/** `GET …/attributes/value?attr=a&attr=b`. */
export const ValuesSchema = z.array(AttrValueSchema);
/** `GET …/attributes`. */
export const AttributesSchema = z.array(
  z.object({ name: z.string().optional(), info: AttrInfoSchema.optional() }),
);
/** Any collection page (`?range=`): a list, whose elements the caller checks. */
export const CollectionSchema = z.array(z.unknown());
/** `GET …/devices?wildcard=`. */
export const DevicesSchema = z.array(z.object({ name: z.string() }));
/** `GET …/state`. */
export const StateSchema = z.object({ state: z.string(), status: z.string().optional() });
/** `PUT …/value`: the value read back, or nothing. */
export const WriteReplySchema = z.union([AttrValueSchema, z.array(AttrValueSchema)]).optional();

const NUMERIC = new Set([
  "DevDouble",
  "DevFloat",
  "DevShort",
  "DevUShort",
  "DevLong",
  "DevULong",
  "DevLong64",
  "DevULong64",
  "DevUChar",
]);
const FLOATING = new Set(["DevDouble", "DevFloat"]);
/** The range of each integer type (64-bit ones unbounded: JSON cannot hold their ends exactly). */
const INTEGER_RANGE: Record<string, [number, number]> = {
  DevUChar: [0, 255],
  DevShort: [-32768, 32767],
  DevUShort: [0, 65535],
  DevLong: [-2147483648, 2147483647],
  DevULong: [0, 4294967295],
  DevLong64: [-Infinity, Infinity],
  DevULong64: [0, Infinity],
};
/** The qualities a TANGO value can have (spec §h.2). */
export const QUALITIES = [
  "ATTR_VALID",
  "ATTR_INVALID",
  "ATTR_ALARM",
  "ATTR_CHANGING",
  "ATTR_WARNING",
];

/** How TANGO REST servers spell the non-finite doubles JSON cannot hold. */
const NON_FINITE: Record<string, number> = { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity };

/** The type an attribute needs, as the wire states it. */
interface Declared {
  data_type?: string;
  data_format?: string;
}

/**
 * The reading's value when it fits the attribute's declared type, else the
 * reason it does not ("sent the text \"1.5abc\" for a DevDouble attribute,
 * expected a number"). Without a declared type any scalar or array passes.
 */
export function typedValue(v: unknown, info?: Declared): { value: Value | null } | {
  error: string;
} {
  const type = info?.data_type;
  const format = info?.data_format ?? "SCALAR";
  if (v === null || v === undefined) return { value: null };
  if (format === "SPECTRUM" || format === "IMAGE") {
    const flat = Array.isArray(v)
      ? v.flat(2)
      : v && typeof v === "object" && Array.isArray((v as { data?: unknown }).data)
      ? (v as { data: unknown[] }).data.flat(2)
      : undefined;
    if (!flat) return { error: `sent ${describe(v)} for a ${format} attribute, expected an array` };
    if (type && NUMERIC.has(type)) {
      const nums = flat.map((x) => scalarNumber(x, type));
      const bad = nums.findIndex((x) => x === undefined);
      if (bad >= 0) {
        return {
          error: `sent ${describe(flat[bad])} in a ${type} ${format}, expected numbers`,
        };
      }
      return { value: nums as number[] };
    }
    return { value: flat.map(Number) };
  }
  if (type && NUMERIC.has(type)) {
    const n = scalarNumber(v, type);
    return n === undefined
      ? {
        error: `sent ${describe(v)} for a ${type} attribute, expected ${expectedOf(type)}`,
      }
      : { value: n };
  }
  if (type === "DevBoolean") {
    return typeof v === "boolean"
      ? { value: v }
      : { error: `sent ${describe(v)} for a DevBoolean attribute, expected true or false` };
  }
  if (type === "DevEnum") {
    return typeof v === "string" || (typeof v === "number" && Number.isInteger(v))
      ? { value: v }
      : { error: `sent ${describe(v)} for a DevEnum attribute, expected a label` };
  }
  if (type === "DevString" || type === "DevState") {
    return typeof v === "string"
      ? { value: v }
      : { error: `sent ${describe(v)} for a ${type} attribute, expected text` };
  }
  if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") return { value: v };
  if (Array.isArray(v)) return { value: v.flat(2).map(Number) };
  return { error: `sent ${describe(v)}, expected a scalar or an array` };
}

function expectedOf(type: string): string {
  const range = INTEGER_RANGE[type];
  if (!range) return "a number";
  return range.every(Number.isFinite) ? `an integer in ${range.join("..")}` : "an integer";
}

function scalarNumber(x: unknown, type: string): number | undefined {
  const range = INTEGER_RANGE[type];
  if (typeof x === "number" && range) {
    return Number.isInteger(x) && x >= range[0] && x <= range[1] ? x : undefined;
  }
  if (typeof x === "number") return x;
  if (typeof x === "string" && FLOATING.has(type) && x in NON_FINITE) return NON_FINITE[x];
  return undefined;
}

function describe(v: unknown): string {
  if (typeof v === "string") return `the text ${JSON.stringify(v.slice(0, 40))}`;
  if (Array.isArray(v)) return "a list";
  if (v === null) return "null";
  return typeof v === "object" ? "an object" : `the ${typeof v} ${String(v)}`;
}
