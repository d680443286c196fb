import assert from "node:assert/strict";
import { runEval } from "../../src/eval/runner.ts";
import { defaultConfig, scriptedEndpoint, shippedTasks, testEnv } from "./scripted_model.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("the shipped tasks number at least 40 in at least 9 categories, each with transcripts", async () => {
  const tasks = await shippedTasks();
  assert(tasks.length >= 40, `${tasks.length} tasks`);
  const categories = new Set(tasks.map((t) => t.category));
  assert(categories.size >= 9, `${categories.size} categories`);
  for (const c of categories) {
    assert(
      tasks.filter((t) => t.category === c).length >= 3,
      `category ${c} has fewer than 3 tasks`,
    );
  }
  for (const t of tasks) assert(t.scripted, `${t.id} has no scripted transcripts`);
});

Deno.test({
  name: "every shipped task passes against the model that solves it",
  ...opts,
  async fn() {
    const tasks = await shippedTasks();
    const recs = await runEval({
      tasks,
      concurrency: 3,
      base: await defaultConfig(),
      model: "main",
      endpoint: scriptedEndpoint("solving"),
      env: testEnv,
    });
    const failed = recs.filter((r) => !r.passed).map((r) => `${r.task}: ${r.reason}`);
    assert.deepEqual(failed, []);
    assert.deepEqual(recs.length, tasks.length);
  },
});

Deno.test({
  name:
    "every shipped task fails against each plausible wrong transcript, with its grader's reason",
  ...opts,
  async fn() {
    const tasks = await shippedTasks();
    const most = Math.max(...tasks.map((t) => t.scripted?.wrong.length ?? 0));
    let runs = 0;
    const failedKinds = new Set<string>();
    for (let i = 0; i < most; i++) {
      const some = tasks.filter((t) => (t.scripted?.wrong.length ?? 0) > i);
      const recs = await runEval({
        tasks: some,
        concurrency: 3,
        base: await defaultConfig(),
        model: "main",
        endpoint: scriptedEndpoint(i),
        env: testEnv,
      });
      for (const r of recs) {
        assert(!r.passed, `${r.task} passed against wrong[${i}]`);
        assert(r.reason && r.reason.length > 10, `${r.task} wrong[${i}] failed without a reason`);
        for (const v of r.verdicts) if (!v.passed) failedKinds.add(v.check);
      }
      runs += recs.length;
    }
    assert(runs >= tasks.length, `${runs} wrong runs`);
    // Every kind of check fails somewhere: none is a check that cannot fail.
    const kinds = [...new Set(tasks.flatMap((t) => t.grade.map((c) => c.check)))].sort();
    assert.deepEqual([...failedKinds].sort(), kinds);
  },
});
