import assert from "node:assert/strict";
import { createApp } from "../../src/cli/app.ts";
import { runSlash } from "../../src/cli/slash.ts";
import { startScriptedLlm } from "../support/scripted_llm.ts";
import { tempConfig } from "../support/run_agent.ts";
import { captureIo } from "../support/capture_io.ts";
import { tempDir } from "../support/temp.ts";

Deno.test("/compact summarises by hand, /agents lists restored runs, /resume lists and continues sessions, /cost and /context say more", async () => {
  await using llm = await startScriptedLlm({
    scenario: {
      turns: [{
        expect: { systemIncludes: "You compact the history" },
        respond: { text: "- q1 to q3 asked" },
      }],
    },
  });
  await using state = await tempDir();
  await using config = await tempConfig(
    `[state]\ndir = "${state.path}"\n[agent]\nagent_md = ""\n[llm.models]\nmain = "m"\n`,
  );
  await using home = await tempDir();
  const io = captureIo({
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "k",
    HOME: home.path,
  });
  const app = await createApp({ config: config.path }, io);
  try {
    await runSlash("/compact", app, io);
    assert.equal(io.text(), "nothing to compact yet\n");
    for (let i = 1; i <= 5; i++) {
      app.session.messages.push({ role: "user", content: `q${i}` }, {
        role: "assistant",
        content: `a${i}`,
      });
    }
    await runSlash("/compact", app, io);
    assert.match(io.text(), /^compacted: ~\d+ → ~\d+ tokens\n$/);
    assert.deepEqual(app.session.userInputs().slice(1), ["q3", "q4", "q5"]);
    await app.sessions.save(app.session);

    await runSlash("/cost", app, io);
    assert.match(
      io.text(),
      /last turn: 0 in[\s\S]*context: \d+ of 128000 tokens \(\d+\.\d%\), compacted 1 times/,
    );
    await runSlash("/context", app, io);
    assert.match(io.text(), /skills: orbit_response, rf_trip, shift_summary; active: none/);

    await runSlash("/agents", app, io);
    assert.equal(io.text(), "no sub-agents in this session\n");
    await app.sessions.saveRun(app.session.id, {
      id: "agent-1",
      agent: "device_search",
      parentId: "operator",
      level: 2,
      task: "t",
      background: true,
      status: "done",
      model: "main",
      tools: [],
      turns: 1,
      tokens: 10,
      result: { total: 0 },
      startedAt: 0,
      endedAt: 1,
    });
    const id = app.session.id;
    await runSlash("/resume", app, io);
    assert.match(io.text(), new RegExp(`● ${id} `));
    await runSlash(`/resume ${id}`, app, io);
    assert.match(io.text(), /resumed .*: 4 questions, 1 sub-agent results; last: q5/);
    await runSlash("/agents", app, io);
    assert.match(
      io.text(),
      /agent-1 device_search level 2, from operator done 1 calls, 10 tokens\n\s+\{"total":0\}/,
    );
    await runSlash("/resume nope", app, io);
    assert.match(io.text(), /no saved session "nope"/);
  } finally {
    await app.close();
  }
});
