/**
 * `accel-agent plot` under a user's real grants (through launch.ts): an
 * archived series from the facility's archiver and a work-directory CSV are
 * charted and saved; files outside the work directory and bad files are
 * refused in one line.
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";

async function setUp() {
  const user = await UserSetup.start({ extra: `[sandbox]\nwork_dir = "work"\nprewarm = false\n` });
  const work = `${user.dir}/work`;
  await Deno.mkdir(`${work}/run-1/work`, { recursive: true });
  return { user, work };
}

Deno.test("plot under the user's grants charts an archived series and a work-directory CSV, saving the SVG there", async () => {
  const { user, work } = await setUp();
  await using _ = user;
  const archived = await user.run(["plot", "SR:COR:H01:SETPT", "--from", "-1h", "--json"]);
  assert.equal(archived.code, 0, archived.stderr);
  const a = JSON.parse(archived.stdout);
  assert.equal(a.series[0].name, "SR:COR:H01:SETPT");
  assert.ok(a.svg.startsWith(`${work}/plots/`));
  assert.match(await Deno.readTextFile(a.svg), /<\/svg>/);

  await Deno.writeTextFile(
    `${work}/run-1/work/fit.csv`,
    "x,model,data\n1,2,2.1\n2,4,3.9\n3,6,6.2\n",
  );
  const csv = await user.run(["plot", "--csv", "run-1/work/fit.csv"]);
  assert.equal(csv.code, 0, csv.stderr);
  assert.match(csv.stdout, /━━ model {2}● min 2 at 1, max 6 at 3/);
  assert.match(csv.stdout, /━━ data {2}● min 2\.1 at 1, max 6\.2 at 3/);
  assert.match(csv.stdout, /svg: \S+\/work\/plots\/plot-\S+\.svg/);
});

Deno.test("plot under the user's grants refuses, in one line, files outside the work directory and bad files", async () => {
  const { user, work } = await setUp();
  await using _ = user;
  await Deno.writeTextFile(`${user.dir}/outside.csv`, "x,y\n1,2\n");
  await Deno.symlink(`${user.dir}/outside.csv`, `${work}/run-1/work/link.csv`);
  await Deno.symlink("/etc/passwd", `${work}/passwd.csv`);
  await Deno.writeTextFile(`${work}/bad.csv`, "x,y\n1,2\n2,\x1b[2Jboom\n");
  const cases: [string[], RegExp][] = [
    [["plot", "--csv", "../outside.csv"], /not inside the work directory/],
    [["plot", "--csv", "run-1/work/link.csv"], /not inside the work directory/],
    [["plot", "--csv", "passwd.csv"], /passwd\.csv: /],
    [["plot", "--csv", "/etc/passwd"], /\/etc\/passwd: /],
    [
      ["plot", "--csv", "bad.csv"],
      /^accel-agent: bad\.csv:3: column y: "\\x1b\[2Jboom" is not a number$/,
    ],
    [["plot", "--scan", "../../etc/passwd"], /neither a scan file's name/],
    [["plot", "NOPE:X", "--from", "-1h"], /nothing to plot: NOPE:X/],
    [["plot", "A:B", "--live", "10s", "--from", "-1h"], /--live reads now/],
  ];
  for (const [args, re] of cases) {
    const r = await user.run(args);
    assert.notEqual(r.code, 0, args.join(" "));
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0] ?? "", re);
    assert.ok(!r.stderr.includes("\x1b"), "no raw escape reaches the terminal");
    assert.ok(!r.stderr.includes("root:"), "nothing of /etc/passwd is shown");
  }
});
