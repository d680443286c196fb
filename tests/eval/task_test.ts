import assert from "node:assert/strict";
import { loadTasks, parseTask, selectTasks, type Task } from "../../src/eval/task.ts";
import { shippedTasks } from "./scripted_model.ts";

const minimal = {
  id: "t-1",
  category: "read-values",
  title: "t",
  turns: ["q"],
  grade: [{ check: "no_plan" }],
};

Deno.test("a task file with a misspelt field is refused with the file and the field's path", () => {
  assert.throws(
    () => parseTask({ ...minimal, grade: [{ check: "no_plan", devcies: [] }] }, "x.json"),
    /x\.json: grade\.0: .*devcies/,
  );
  assert.throws(() => parseTask({ ...minimal, id: "Bad Id" }, "x.json"), /x\.json: id: lowercase/);
  const t = parseTask(minimal, "x.json");
  assert.equal(t.seed, 1);
  assert.equal(t.limits.seconds, 300);
});

Deno.test("a facility's task directory adds tasks; an id used twice names both files", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/a/b`, { recursive: true });
    await Deno.writeTextFile(`${dir}/a/b/one.json`, JSON.stringify(minimal));
    await Deno.writeTextFile(`${dir}/a/two.json`, JSON.stringify({ ...minimal, id: "t-2" }));
    assert.deepEqual((await loadTasks([`${dir}/a`])).map((t) => t.id), ["t-1", "t-2"]);
    await Deno.writeTextFile(`${dir}/a/three.json`, JSON.stringify(minimal));
    await assert.rejects(
      loadTasks([`${dir}/a`]),
      /three\.json: task id "t-1" is also used by .*one\.json/,
    );
    await assert.rejects(loadTasks([`${dir}/none`]), /task directory not found/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("--tasks selects by category, id or glob, and says when a selector matches nothing", async () => {
  const tasks: Task[] = await shippedTasks();
  const reads = selectTasks(tasks, "read-values");
  assert.ok(reads.length >= 3 && reads.every((t) => t.category === "read-values"));
  assert.deepEqual(selectTasks(tasks, "read-ring-current").map((t) => t.id), ["read-ring-current"]);
  assert.ok(selectTasks(tasks, "scan-*,refuse-limits").length >= 7);
  assert.throws(() => selectTasks(tasks, "nothing-*"), /matches no task id or category/);
});
