import assert from "node:assert/strict";
import { createApp } from "../../src/app/app.ts";
import { runSlash } from "../../src/cli/repl/slash.ts";
import { tempConfig } from "../support/run_agent.ts";
import { captureIo } from "../support/capture_io.ts";
import { tempDir } from "../support/temp.ts";

const CONFIG = `
[llm]
default = "main"
[llm.models]
main = "big-model"
fast = { model = "small-model", context_window = 8000, price_in = 1.0, price_out = 2.0 }
`;

Deno.test("slash commands: /provider lists and switches models, /cost uses the model's prices", async () => {
  await using config = await tempConfig(CONFIG);
  await using home = await tempDir();
  const io = captureIo({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1", HOME: home.path });
  const app = await createApp({ config: config.path }, io);
  try {
    await runSlash("/provider", app, io);
    assert.match(io.text(), /● main big-model\n\s+fast small-model/);
    await runSlash("/provider fast", app, io);
    assert.match(io.text(), /now using fast \(small-model at http:\/\/127\.0\.0\.1:9\/v1\)/);
    assert.equal(app.modelInfo.model, "small-model");
    await runSlash("/provider nope", app, io);
    assert.match(io.text(), /model "nope" is not configured; known models: main, fast/);
    assert.equal(app.modelInfo.name, "fast", "a bad name keeps the current model");
    app.session.addUsage({
      promptTokens: 1_000_000,
      completionTokens: 500_000,
      totalTokens: 1_500_000,
    }, "fast");
    await runSlash("/cost", app, io);
    assert.match(io.text(), /1000000 in · 500000 out[\s\S]*cost at fast's prices: \$2\.0000/);
  } finally {
    await app.close();
  }
});

Deno.test("slash commands: /tools, /context, /history, /clear, /quit and an unknown command", async () => {
  await using config = await tempConfig("");
  await using home = await tempDir();
  const io = captureIo({ OPENAI_BASE_URL: "http://127.0.0.1:9/v1", HOME: home.path });
  const app = await createApp({ config: config.path }, io);
  try {
    await runSlash("/tools", app, io);
    assert.match(io.text(), /get_parameter \(read-only\)[\s\S]*search_device[\s\S]*read_log/);
    app.session.messages.push({ role: "user", content: "what is the RF phase?" });
    await runSlash("/history", app, io);
    assert.match(io.text(), /1 what is the RF phase\?/);
    await runSlash("/context", app, io);
    const context = io.text();
    assert.match(context, /system prompt: \d+ characters/);
    assert.match(context, /conversation: 1 messages/);
    await runSlash("/clear", app, io);
    assert.equal(app.session.messages.length, 0);
    assert.equal(await runSlash("/quit", app, io), "quit");
    io.text();
    await runSlash("/frobnicate", app, io);
    assert.match(io.text(), /unknown command \/frobnicate; \/help lists the commands/);
    await runSlash("/help", app, io);
    assert.match(io.text(), /\/provider \[NAME\]/);
  } finally {
    await app.close();
  }
});
