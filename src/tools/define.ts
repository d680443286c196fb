/**
 * The one way to define a tool: a name, a description, a zod schema for the
 * arguments, and an `execute` function. The registry — not each tool —
 * validates, coerces, times, limits and truncates.
 *
 * @module
 */
import { z } from "zod";
import type { ControlSystem } from "../adapters/adapter.ts";
import type { SandboxDeps } from "../sandbox/types.ts";

/** What tools may use; given once to the registry. */
export interface ToolDeps {
  cs: ControlSystem;
  /** Milliseconds since the epoch (the simulator's clock in tests). */
  now(): number;
  /** The Python sandbox; the sandbox tools say it is off when absent. */
  sandbox?: SandboxDeps;
}

export interface ToolContext extends ToolDeps {
  signal: AbortSignal;
}

/** A failure the model should read and act on (wrong device, bad time range…). */
export class ToolError extends Error {
  override name = "ToolError";
}

export interface Tool {
  readonly name: string;
  readonly description: string;
  /** True when the tool never changes anything; such calls may run concurrently. */
  readonly readOnly: boolean;
  readonly schema: z.ZodType;
  /** The JSON schema the model sees, generated from the zod schema. */
  readonly parameters: Record<string, unknown>;
  execute(args: unknown, ctx: ToolContext): Promise<unknown>;
}

export interface ToolDefinition<S extends z.ZodType> {
  name: string;
  description: string;
  parameters: S;
  readOnly: boolean;
  execute(args: z.output<S>, ctx: ToolContext): Promise<unknown>;
}

/**
 * Defines a tool.
 *
 * @example
 * ```ts
 * const echo = defineTool({
 *   name: "echo",
 *   description: "Returns its text",
 *   parameters: z.object({ text: z.string().describe("what to return") }),
 *   readOnly: true,
 *   execute: async ({ text }) => ({ text }),
 * });
 * ```
 */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): Tool {
  const parameters = z.toJSONSchema(def.parameters, { io: "input" }) as Record<string, unknown>;
  delete parameters.$schema;
  return {
    name: def.name,
    description: def.description,
    readOnly: def.readOnly,
    schema: def.parameters,
    parameters,
    // The registry validated `args` against `schema` before calling.
    execute: (args, ctx) => def.execute(args as z.output<S>, ctx),
  };
}
