/**
 * Output signatures of sub-agents: a JSON schema (the subset below), or a
 * compact typed form such as `{devices: string[], total: integer, note?: string}`
 * that is turned into one. The `return` tool checks a result against it.
 *
 * Supported schema keywords: type (object, array, string, number, integer,
 * boolean, null), properties, required, additionalProperties: false, items,
 * enum, minItems, maxItems, minimum, maximum, minLength.
 *
 * @module
 */

/** A JSON schema as plain data. */
export type JsonSchema = Record<string, unknown>;

/**
 * Parses a signature: text starting with `{"` or `{ "type"` is JSON schema,
 * anything else the compact form. Throws SyntaxError when neither reads.
 *
 * @example
 * ```ts
 * parseSignature("{devices: string[], total: integer}");
 * // { type: "object", properties: { devices: { type: "array", items: { type: "string" } },
 * //   total: { type: "integer" } }, required: ["devices", "total"], additionalProperties: false }
 * ```
 */
export function parseSignature(text: string): JsonSchema {
  const t = text.trim();
  if (/^\{\s*"/.test(t)) {
    const schema = JSON.parse(t) as unknown;
    if (!isObject(schema) || schema.type !== "object") {
      throw new SyntaxError('a signature schema must be an object schema ("type": "object")');
    }
    return schema;
  }
  const p = new CompactParser(t.startsWith("{") ? t : `{${t}}`);
  const schema = p.type();
  p.end();
  return schema;
}

class CompactParser {
  #i = 0;
  constructor(readonly s: string) {}

  #ws(): void {
    while (/\s/.test(this.s[this.#i] ?? "")) this.#i++;
  }
  #take(ch: string): boolean {
    this.#ws();
    if (this.s[this.#i] !== ch) return false;
    this.#i++;
    return true;
  }
  #fail(what: string): never {
    throw new SyntaxError(`signature: expected ${what} at column ${this.#i + 1} of "${this.s}"`);
  }

  end(): void {
    this.#ws();
    if (this.#i < this.s.length) this.#fail("the end");
  }

  type(): JsonSchema {
    this.#ws();
    let schema: JsonSchema;
    if (this.#take("{")) {
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      while (!this.#take("}")) {
        this.#ws();
        const m = /^[A-Za-z_]\w*/.exec(this.s.slice(this.#i));
        if (!m) this.#fail("a field name");
        this.#i += m[0].length;
        const optional = this.#take("?");
        if (!this.#take(":")) this.#fail('":"');
        properties[m[0]] = this.type();
        if (!optional) required.push(m[0]);
        if (!this.#take(",")) {
          if (!this.#take("}")) this.#fail('"," or "}"');
          break;
        }
      }
      schema = { type: "object", properties, required, additionalProperties: false };
    } else {
      const m = /^(string|number|integer|boolean|any)/.exec(this.s.slice(this.#i));
      if (!m) this.#fail("a type (string, number, integer, boolean, any, {…})");
      this.#i += m[0].length;
      schema = m[0] === "any" ? {} : { type: m[0] };
    }
    while (this.#take("[")) {
      if (!this.#take("]")) this.#fail('"]"');
      schema = { type: "array", items: schema };
    }
    return schema;
  }
}

/** Errors of `value` against `schema`, each naming its path; empty when valid. */
export function validateSignature(schema: JsonSchema, value: unknown, path = "result"): string[] {
  const errors: string[] = [];
  const type = schema.type;
  if (typeof type === "string" && !hasType(value, type)) {
    return [
      `${path} must be ${/^[aeiou]/.test(type) ? "an" : "a"} ${type}, got ${describe(value)}`,
    ];
  }
  if (
    Array.isArray(schema.enum) &&
    !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))
  ) {
    errors.push(`${path} must be one of ${JSON.stringify(schema.enum)}`);
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) {
      errors.push(`${path} must be at least ${schema.minimum}`);
    }
    if (typeof schema.maximum === "number" && value > schema.maximum) {
      errors.push(`${path} must be at most ${schema.maximum}`);
    }
  }
  if (
    typeof value === "string" && typeof schema.minLength === "number" &&
    value.length < schema.minLength
  ) {
    errors.push(`${path} must have at least ${schema.minLength} characters`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      errors.push(`${path} must have at least ${schema.minItems} items`);
    }
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
      errors.push(`${path} must have at most ${schema.maxItems} items`);
    }
    if (isObject(schema.items)) {
      const items = schema.items;
      value.forEach((v, i) => errors.push(...validateSignature(items, v, `${path}[${i}]`)));
    }
  }
  if (isObject(value) && !Array.isArray(value)) {
    const props = isObject(schema.properties) ? schema.properties : {};
    for (const key of Array.isArray(schema.required) ? schema.required as string[] : []) {
      if (!(key in value)) errors.push(`${path}.${key} is required`);
    }
    for (const [key, v] of Object.entries(value)) {
      const sub = props[key];
      if (isObject(sub)) errors.push(...validateSignature(sub, v, `${path}.${key}`));
      else if (schema.additionalProperties === false) {
        errors.push(`${path}.${key} is not a field of the signature`);
      }
    }
  }
  return errors;
}

function hasType(v: unknown, type: string): boolean {
  switch (type) {
    case "object":
      return isObject(v) && !Array.isArray(v);
    case "array":
      return Array.isArray(v);
    case "integer":
      return Number.isInteger(v);
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "null":
      return v === null;
    case "string":
      return typeof v === "string";
    case "boolean":
      return typeof v === "boolean";
    default:
      return false;
  }
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "an object" : `${typeof v} ${JSON.stringify(v)}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}
