/**
 * Scenarios from JSON: validated field by field so a typo in a scenario file is
 * reported with its path instead of silently ignored.
 *
 * @module
 */

import type {
  Expect,
  FaultResponse,
  MessageResponse,
  Respond,
  Scenario,
  ScriptedTurn,
  ToolCallSpec,
  UsageSpec,
} from "./scripted_llm_types.ts";

type Json = Record<string, unknown>;

class Reader {
  constructor(readonly source: string) {}

  fail(path: string, what: string): never {
    throw new TypeError(`${this.source}: ${path}: ${what}`);
  }

  object(value: unknown, path: string, keys: readonly string[]): Json {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.fail(path, "expected an object");
    }
    for (const key of Object.keys(value)) {
      if (!keys.includes(key)) {
        this.fail(`${path}.${key}`, `unknown field (known: ${keys.join(", ")})`);
      }
    }
    return value as Json;
  }

  array(value: unknown, path: string): unknown[] {
    if (!Array.isArray(value)) this.fail(path, "expected an array");
    return value;
  }

  string(value: unknown, path: string): string {
    if (typeof value !== "string") this.fail(path, "expected a string");
    return value;
  }

  number(value: unknown, path: string, min = 0): number {
    if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
      this.fail(path, `expected a number >= ${min}`);
    }
    return value;
  }

  boolean(value: unknown, path: string): boolean {
    if (typeof value !== "boolean") this.fail(path, "expected true or false");
    return value;
  }

  strings(value: unknown, path: string): string[] {
    return this.array(value, path).map((item, i) => this.string(item, `${path}[${i}]`));
  }

  /** Calls `read` on `json[key]` when present and stores the result under the same key. */
  optional<T>(json: Json, key: string, path: string, read: (v: unknown, p: string) => T) {
    return json[key] === undefined ? {} : { [key]: read(json[key], `${path}.${key}`) };
  }
}

/**
 * Validates parsed JSON as a scenario. Throws a `TypeError` naming the source and
 * the path of the first problem.
 */
export function parseScenario(json: unknown, source = "scenario"): Scenario {
  const r = new Reader(source);
  const root = r.object(json, "$", ["name", "turns", "loop", "models", "$comment"]);
  const turns = r.array(root.turns, "$.turns").map((turn, i) => readTurn(r, turn, `$.turns[${i}]`));
  const scenario: Scenario = {
    turns,
    ...r.optional(root, "name", "$", (v, p) => r.string(v, p)),
    ...r.optional(root, "loop", "$", (v, p) => r.boolean(v, p)),
    ...r.optional(root, "models", "$", (v, p) => r.strings(v, p)),
  };
  if (scenario.loop && turns.length === 0) r.fail("$.turns", "a looping scenario needs turns");
  return scenario;
}

/** Reads and validates a scenario JSON file. */
export async function loadScenario(path: string | URL): Promise<Scenario> {
  const text = await Deno.readTextFile(path);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(`${path}: ${error instanceof Error ? error.message : error}`);
  }
  return parseScenario(json, String(path));
}

function readTurn(r: Reader, value: unknown, path: string): ScriptedTurn {
  const json = r.object(value, path, ["expect", "respond", "$comment"]);
  return {
    respond: readRespond(r, json.respond, `${path}.respond`),
    ...(json.expect === undefined ? {} : { expect: readExpect(r, json.expect, `${path}.expect`) }),
  };
}

const EXPECT_KEYS = [
  "toolsOffered",
  "toolsInclude",
  "toolsExclude",
  "lastRole",
  "userIncludes",
  "toolResultIncludes",
  "toolResultFor",
  "systemIncludes",
  "model",
  "stream",
] as const;

function readExpect(r: Reader, value: unknown, path: string): Expect {
  const json = r.object(value, path, EXPECT_KEYS);
  const strings = (v: unknown, p: string) => r.strings(v, p);
  const string = (v: unknown, p: string) => r.string(v, p);
  const role = (v: unknown, p: string) => {
    if (v === "user" || v === "tool" || v === "assistant" || v === "system") return v;
    return r.fail(p, 'expected "user", "tool", "assistant" or "system"');
  };
  const toolResultFor = (v: unknown, p: string) => {
    const o = r.object(v, p, ["toolCallId", "includes"]);
    return {
      includes: r.string(o.includes, `${p}.includes`),
      ...r.optional(o, "toolCallId", p, string),
    };
  };
  return {
    ...r.optional(json, "toolsOffered", path, strings),
    ...r.optional(json, "toolsInclude", path, strings),
    ...r.optional(json, "toolsExclude", path, strings),
    ...r.optional(json, "lastRole", path, role),
    ...r.optional(json, "userIncludes", path, string),
    ...r.optional(json, "toolResultIncludes", path, strings),
    ...r.optional(json, "toolResultFor", path, toolResultFor),
    ...r.optional(json, "systemIncludes", path, string),
    ...r.optional(json, "model", path, string),
    ...r.optional(json, "stream", path, (v, p) => r.boolean(v, p)),
  };
}

const MESSAGE_FIELDS = ["text", "toolCalls", "usage", "finishReason", "chunkSize", "chunkDelayMs"];
const FAULT_FIELDS = [
  "fault",
  "retryAfter",
  "retryAfterMs",
  "status",
  "afterText",
  "toolCall",
  "cutAfterChars",
  "done",
  "ms",
  "then",
  "chunk",
  "delayMs",
];

function readRespond(r: Reader, value: unknown, path: string): Respond {
  const peek = r.object(value, path, [...MESSAGE_FIELDS, ...FAULT_FIELDS]);
  return peek.fault === undefined ? readMessage(r, value, path) : readFault(r, value, path);
}

function readMessage(r: Reader, value: unknown, path: string): MessageResponse {
  const json = r.object(value, path, MESSAGE_FIELDS);
  const usage = (v: unknown, p: string): UsageSpec => {
    const o = r.object(v, p, ["prompt_tokens", "completion_tokens"]);
    return {
      prompt_tokens: r.number(o.prompt_tokens, `${p}.prompt_tokens`),
      completion_tokens: r.number(o.completion_tokens, `${p}.completion_tokens`),
    };
  };
  return {
    ...r.optional(json, "text", path, (v, p) => r.string(v, p)),
    ...r.optional(
      json,
      "toolCalls",
      path,
      (v, p) => r.array(v, p).map((call, i) => readToolCall(r, call, `${p}[${i}]`)),
    ),
    ...r.optional(json, "usage", path, usage),
    ...r.optional(json, "finishReason", path, (v, p) => r.string(v, p)),
    ...r.optional(json, "chunkSize", path, (v, p) => r.number(v, p, 1)),
    ...r.optional(json, "chunkDelayMs", path, (v, p) => r.number(v, p)),
  };
}

function readToolCall(r: Reader, value: unknown, path: string): ToolCallSpec {
  const json = r.object(value, path, ["id", "name", "arguments"]);
  const args = json.arguments;
  if (
    typeof args !== "string" && (typeof args !== "object" || args === null || Array.isArray(args))
  ) {
    r.fail(`${path}.arguments`, "expected a string or an object");
  }
  return {
    name: r.string(json.name, `${path}.name`),
    arguments: args as ToolCallSpec["arguments"],
    ...r.optional(json, "id", path, (v, p) => r.string(v, p)),
  };
}

function readFault(r: Reader, value: unknown, path: string): FaultResponse {
  const fault = (value as Json).fault;
  const keys = (...more: string[]) => r.object(value, path, ["fault", ...more]);
  const num = (json: Json, key: string, min = 0) =>
    r.optional(json, key, path, (v, p) => r.number(v, p, min));
  switch (fault) {
    case "rate_limit": {
      const json = keys("retryAfter", "retryAfterMs");
      return { fault, ...num(json, "retryAfter"), ...num(json, "retryAfterMs") };
    }
    case "server_error": {
      const json = keys("status");
      const status = json.status === undefined
        ? undefined
        : r.number(json.status, `${path}.status`);
      if (status !== undefined && (status < 500 || status > 599 || !Number.isInteger(status))) {
        r.fail(`${path}.status`, "expected a 5xx status");
      }
      return { fault, ...(status === undefined ? {} : { status }) };
    }
    case "bad_request": {
      const json = keys("status");
      if (json.status === undefined) return { fault };
      if (json.status !== 400 && json.status !== 422) {
        r.fail(`${path}.status`, "expected 400 or 422");
      }
      return { fault, status: json.status };
    }
    case "stall": {
      const json = keys("afterText");
      return { fault, ...r.optional(json, "afterText", path, (v, p) => r.string(v, p)) };
    }
    case "cut": {
      const json = keys("toolCall", "cutAfterChars");
      return {
        fault,
        toolCall: readToolCall(r, json.toolCall, `${path}.toolCall`),
        ...num(json, "cutAfterChars"),
      };
    }
    case "truncate": {
      const json = keys("afterText", "done");
      if (json.done !== undefined && typeof json.done !== "boolean") {
        r.fail(`${path}.done`, "expected true or false");
      }
      return {
        fault,
        afterText: r.string(json.afterText, `${path}.afterText`),
        ...(json.done === undefined ? {} : { done: json.done === true }),
      };
    }
    case "reset": {
      const json = keys("afterText", "status");
      return {
        fault,
        afterText: r.string(json.afterText, `${path}.afterText`),
        ...num(json, "status"),
      };
    }
    case "delay": {
      const json = keys("ms", "then");
      return {
        fault,
        ms: r.number(json.ms, `${path}.ms`),
        then: readRespond(r, json.then, `${path}.then`),
      };
    }
    case "flood":
    case "trickle": {
      const json = keys("chunk", "delayMs");
      return {
        fault,
        ...r.optional(json, "chunk", path, (v, p) => r.string(v, p)),
        ...num(json, "delayMs"),
      };
    }
    default:
      return r.fail(
        `${path}.fault`,
        'expected "rate_limit", "server_error", "bad_request", "stall", "cut", "truncate", "reset", "delay", "flood" or "trickle"',
      );
  }
}
