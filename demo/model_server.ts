/**
 * The demo's model: an OpenAI-compatible chat endpoint on 127.0.0.1 that
 * replays a recorded session, one scripted answer per request, streamed in
 * small pieces so the terminal shows it arriving. No model is called.
 *
 * @module
 */

/** A tool call the replayed model makes. */
export interface ReplayCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** One recorded answer: text, tool calls, or both. */
export interface ReplayStep {
  /** Text; a function gets the last tool result (parsed JSON, or its text). */
  text?: string | ((lastResult: unknown) => string);
  /** Tool calls; a function gets the last tool result (parsed JSON, or its text). */
  toolCalls?: ReplayCall[] | ((lastResult: unknown) => ReplayCall[]);
}

/** A running replay server; `url` ends in /v1. */
export interface ReplayServer extends AsyncDisposable {
  url: string;
  /** Requests answered so far. */
  answered(): number;
}

interface ChatRequest {
  stream?: boolean;
  messages?: { role: string; content?: unknown }[];
}

/**
 * The content of the last tool message, parsed as JSON when it is JSON (also
 * inside the marked data block that results holding outside text come in).
 */
function lastToolResult(req: ChatRequest): unknown {
  const tool = [...(req.messages ?? [])].reverse().find((m) => m.role === "tool");
  if (typeof tool?.content !== "string") return undefined;
  const block = /^<data source="[^"]*" id="([^"]*)">\n([\s\S]*)\n<\/data id="\1">$/.exec(
    tool.content,
  );
  try {
    return JSON.parse(block ? block[2] ?? "" : tool.content);
  } catch {
    return tool.content;
  }
}

/** Starts the replay of `steps` on 127.0.0.1 (a free port); `pauseMs` between streamed pieces. */
export function startReplayServer(steps: ReplayStep[], pauseMs = 25): ReplayServer {
  let next = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      if (req.method !== "POST" || !new URL(req.url).pathname.endsWith("/chat/completions")) {
        return new Response("not found", { status: 404 });
      }
      const body = await req.json() as ChatRequest;
      const step = steps[next++] ?? { text: "(The recorded session has no more answers.)" };
      const last = lastToolResult(body);
      const calls = typeof step.toolCalls === "function"
        ? step.toolCalls(last)
        : step.toolCalls ?? [];
      const text = typeof step.text === "function" ? step.text(last) : step.text ?? "";
      return body.stream === false ? whole(text, calls) : streamed(text, calls, pauseMs);
    },
  );
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}/v1`,
    answered: () => next,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

const wireCalls = (calls: ReplayCall[]) =>
  calls.map((c, i) => ({
    index: i,
    id: `call_${i + 1}`,
    type: "function",
    function: { name: c.name, arguments: JSON.stringify(c.arguments) },
  }));

function whole(text: string, calls: ReplayCall[]): Response {
  return Response.json({
    id: "replay",
    object: "chat.completion",
    created: 0,
    model: "replay",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: text,
        ...(calls.length ? { tool_calls: wireCalls(calls) } : {}),
      },
      finish_reason: calls.length ? "tool_calls" : "stop",
    }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  });
}

function streamed(text: string, calls: ReplayCall[], pauseMs: number): Response {
  const enc = new TextEncoder();
  const chunk = (delta: unknown, finish: string | null = null) =>
    enc.encode(
      `data: ${
        JSON.stringify({
          id: "replay",
          object: "chat.completion.chunk",
          created: 0,
          model: "replay",
          choices: [{ index: 0, delta, finish_reason: finish }],
        })
      }\n\n`,
    );
  const body = new ReadableStream<Uint8Array>({
    async start(c) {
      c.enqueue(chunk({ role: "assistant", content: "" }));
      for (const piece of text.match(/\S+\s*|\s+/g) ?? []) {
        c.enqueue(chunk({ content: piece }));
        await new Promise((r) => setTimeout(r, pauseMs));
      }
      if (calls.length) c.enqueue(chunk({ tool_calls: wireCalls(calls) }));
      c.enqueue(chunk({}, calls.length ? "tool_calls" : "stop"));
      c.enqueue(enc.encode("data: [DONE]\n\n"));
      c.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}
