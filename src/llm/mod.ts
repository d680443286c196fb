/**
 * The model layer: types, typed errors and the OpenAI-compatible client.
 *
 * @module
 */
export * from "./types.ts";
export { LlmError, type LlmErrorKind } from "./errors.ts";
export type { RetryPolicy } from "./retry.ts";
