/**
 * An in-process {@link ModelClient} that answers from a script, for loop
 * tests that need no HTTP. (End-to-end tests use the scripted server.)
 *
 * @module
 */
import { LlmError } from "../../src/llm/errors.ts";
import type { ModelClient, ModelEvent, ModelRequest, ToolCall } from "../../src/llm/types.ts";

export type FakeStep =
  | { text?: string; toolCalls?: Partial<ToolCall>[] }
  | { error: LlmError }
  | { hang: true };

export class FakeModel implements ModelClient {
  readonly name = "fake";
  readonly model = "fake-model";
  readonly requests: ModelRequest[] = [];
  #steps: FakeStep[];

  constructor(steps: FakeStep[]) {
    this.#steps = [...steps];
  }

  get remaining(): number {
    return this.#steps.length;
  }

  async *complete(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    this.requests.push(structuredClone(request));
    const step = this.#steps.shift();
    if (!step) throw new Error("FakeModel: no steps left");
    if ("error" in step) throw step.error;
    if ("hang" in step) {
      await new Promise((_, reject) => {
        signal.addEventListener("abort", () => reject(new LlmError("aborted", "cancelled")), {
          once: true,
        });
      });
      return;
    }
    const text = step.text ?? "";
    for (const piece of text.match(/.{1,5}/gs) ?? []) yield { type: "text", delta: piece };
    const toolCalls = (step.toolCalls ?? []).map((c, i) => ({
      id: c.id ?? `call_${i}`,
      name: c.name ?? "",
      arguments: c.arguments ?? "{}",
    }));
    yield {
      type: "done",
      response: {
        text,
        toolCalls,
        usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
        finishReason: toolCalls.length ? "tool_calls" : "stop",
        model: this.model,
      },
    };
  }
}
