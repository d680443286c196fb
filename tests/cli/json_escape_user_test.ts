/**
 * JSON piped to a terminal cannot drive it: `ask --stream-json` and
 * `ask --json` print sandbox output holding a C1 CSI, bidi overrides and tag
 * characters as `\uXXXX` escapes, every line stays valid JSON, and it
 * decodes to the original text. Run as a user runs it (through the launcher).
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";

/** A C1 CSI, a bidi override and isolate, a zero-width space, a tag character, a line separator. */
const HOSTILE = "\u009b2J\u202eevil\u2066\u200b\u{E0041}\u2028";
/** Any of those raw, or DEL and the other C1 controls. */
const RAW = /[\u007f-\u009f\u200b\u202a-\u202e\u2028\u2029\u2066-\u2069]|\udb40[\udc00-\udc7f]/;

const CODE = `print(${JSON.stringify(HOSTILE).replace(/\\u\{E0041\}|\u{E0041}/u, "\\U000E0041")})`;

Deno.test("ask --stream-json and --json print sandbox output with every control, bidi and tag character escaped", async () => {
  await using user = await UserSetup.start({ extra: "[sandbox]\nprewarm = false\n" });
  for (const flag of ["--stream-json", "--json"]) {
    await using llm = await startScriptedLlm({
      scenario: {
        turns: [
          {
            respond: {
              toolCalls: [{
                name: "execute_code",
                arguments: { description: "prints", code: CODE },
              }],
            },
          },
          { respond: { text: `The output was ${HOSTILE}.` } },
        ],
      },
    });
    const r = await user.run(["ask", flag, "Run it."], {
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "k" },
      ceilingMs: 180_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, RAW, `${flag}: a raw character reached stdout`);
    const values = flag === "--json"
      ? [JSON.parse(r.stdout)]
      : r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const text = JSON.stringify(values);
    // Decoded, the sandbox's output and the model's answer are the original text.
    const stdout = values.flatMap((v) =>
      v.type === "tool_end" ? [v.result.stdout] : (v.tool_calls ?? []).map((c: {
        result: { stdout: string };
      }) => c.result.stdout)
    );
    assert.ok(stdout.length > 0, text.slice(0, 400));
    for (const out of stdout) assert.equal(out, `${HOSTILE}\n`);
    const answer = values.at(-1).answer;
    assert.equal(answer, `The output was ${HOSTILE}.`);
  }
});
