/**
 * Every number of a plan's logbook entry is one the executor's results and
 * the audit hold, as an operator's script runs the program (through the
 * launcher, with the config's grants) on the fake EPICS facility: a plan
 * stopped part-way lists only the devices it reached, with the values sent
 * to them, never the plan's later writes.
 *
 * @module
 */
import assert from "node:assert/strict";
import { UserSetup } from "../support/user_grants.ts";
import { auditEntries } from "../support/audit_entries.ts";

const LIMITS = `[limits."SR:COR:H01:SETPT"]
min = -2
max = 2
max_step = 0.5
tolerance = 0.001

[limits."SR:COR:H03:SETPT"]
min = -2
max = 2
max_step = 0.5
tolerance = 0.001

[limits."SR:OPERATOR:MSG"]
values = ["Beam for users", "Machine development"]
`;

const CREDENTIALS = { OLOG_USER: "olog-user", OLOG_PASSWORD: "olog-secret" };

async function setup(): Promise<UserSetup> {
  return await UserSetup.start({
    limits: LIMITS,
    epicsConfig: { username_env: "OLOG_USER", password_env: "OLOG_PASSWORD" },
  });
}

/** The rows of the entry's devices table, by device. */
function rows(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const m = /^\| `([^`]+)` \| (.*) \|$/.exec(line);
    if (m) out.set(m[1] as string, (m[2] as string).split(" | "));
  }
  return out;
}

Deno.test("a plan stopped by a refused write lists only the devices it reached, never the writes after it", async () => {
  await using user = await setup();
  const file = await user.plan({
    description: "Trim H01, then H03, then announce machine development",
    actions: [
      { type: "write", device: "SR:COR:H01:SETPT", value: 0.6, reason: "center the orbit" },
      { type: "write", device: "SR:COR:H03:SETPT", value: 0.1, reason: "close the bump" },
      {
        type: "write",
        device: "SR:OPERATOR:MSG",
        value: "Machine development",
        reason: "tell the users",
      },
    ],
  });
  const token = await user.token(file);
  const ran = await user.run(
    ["plan", "run", file, "--approved-hash", token, "--json", "--elog", "post"],
    { env: CREDENTIALS },
  );
  const out = JSON.parse(ran.stdout);
  assert.equal(out.status, "failed", ran.stderr);
  assert.equal(out.elog.status, "posted", ran.stderr);
  assert.ok(
    !user.writes.some((w) => w.pv.endsWith("SR:OPERATOR:MSG")),
    "the gateway never got the announcement",
  );
  const [entry] = user.epics.ologService.created;
  const text = String(entry?.description);
  const table = rows(text);
  assert.deepEqual([...table.keys()], ["SR:COR:H01:SETPT", "SR:COR:H03:SETPT"], text);
  // H03 got 0.1 on the wire (the IOC refused it) and was put back: its last write is the original.
  assert.deepEqual(table.get("SR:COR:H03:SETPT")?.[4], "restored to the original", text);
  assert.match(text, /\*\*Outcome:\*\* failed: .*; 2 devices written/);
  // The audit's outcome holds the same: the announcement was never sent.
  const outcome = (await auditEntries(user.stateDir)).find((e) => e.status === "failed");
  const actions = (outcome?.results as { actions: { where: string; ok: boolean }[] }).actions;
  assert.deepEqual(actions.map((a) => [a.where, a.ok]), [
    ["actions[0]", true],
    ["actions[1]", false],
  ]);
});

Deno.test("a scan's data file changed after the draft was made is left out of the entry with one line; the one as the scan wrote it goes", async () => {
  await using user = await setup();
  const file = await user.plan({
    description: "Scan H01",
    actions: [{
      type: "scan",
      writeDevice: "SR:COR:H01:SETPT",
      start: 0.5,
      stop: 0.6,
      steps: 3,
      readDevices: ["SR:DCCT:CURRENT"],
      dwellSeconds: 0,
    }],
  });
  const runScan = async () => {
    const token = await user.token(file);
    const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
      env: CREDENTIALS,
    });
    const out = JSON.parse(ran.stdout);
    assert.equal(out.status, "completed", ran.stderr);
    const [csv] = out.elog.draft.attachments as string[];
    assert.match(csv ?? "", /\/scans\/scan-[0-9a-f]{12}-0-.*\.csv$/);
    return { id: out.elog.draft.id as string, csv: csv as string };
  };
  const edited = await runScan();
  const asWritten = await Deno.readTextFile(edited.csv);
  // Someone "corrects" the data after the draft was made.
  await Deno.writeTextFile(edited.csv, asWritten.replace(/301\.5/g, "350"));
  const post = await user.run(["elog", "post", edited.id], { env: CREDENTIALS });
  assert.equal(post.code, 0, post.stderr);
  const name = edited.csv.slice(edited.csv.lastIndexOf("/") + 1);
  assert.match(
    post.stdout,
    new RegExp(
      `^  ! .*${
        name.replaceAll(".", "\\.")
      }: not attached \\(it changed after the draft was made\\)$`,
      "m",
    ),
  );
  const olog = user.epics.ologService;
  assert.deepEqual(olog.received[0]?.files, []);

  // The same run's file as the scan wrote it goes with the entry.
  const intact = await runScan();
  const fine = await user.run(["elog", "post", intact.id], { env: CREDENTIALS });
  assert.equal(fine.code, 0, fine.stderr);
  assert.doesNotMatch(fine.stdout, /not attached/);
  assert.deepEqual(
    olog.received[1]?.files.map((f) => f.text),
    [await Deno.readTextFile(intact.csv)],
  );
});

/** Runs a one-write plan under `user`, keeping its draft; the draft's id and file. */
async function trimmed(user: UserSetup, value = 0.6): Promise<{ id: string; path: string }> {
  const file = await user.plan({
    description: "Trim H01",
    actions: [{ type: "write", device: "SR:COR:H01:SETPT", value, reason: "center the orbit" }],
  }, `trim-${value}.json`);
  const token = await user.token(file);
  const ran = await user.run(["plan", "run", file, "--approved-hash", token, "--json"], {
    env: CREDENTIALS,
  });
  const out = JSON.parse(ran.stdout);
  assert.equal(out.status, "completed", ran.stderr);
  return { id: out.elog.draft.id, path: out.elog.draft.path };
}

/** Rewrites the draft file at `path` as `change` says (as an editor or a script would). */
async function handEdit(path: string, change: (d: Record<string, unknown>) => void) {
  const d = JSON.parse(await Deno.readTextFile(path));
  change(d);
  await Deno.writeTextFile(path, JSON.stringify(d, null, 2));
}

Deno.test("a draft whose devices table was changed by hand is refused in one line, whatever its facts say; its prose may change and is posted marked as edited", async () => {
  await using user = await setup();
  const olog = user.epics.ologService;
  const row = "| `SR:COR:H01:SETPT` | 0.5 | 0.6 | 0.6 |";
  const forged = "| `SR:COR:H01:SETPT` | 0.5 | 0.6 | 0.61 |";
  const numbers = await trimmed(user);
  let line = "";
  await handEdit(numbers.path, (d) => {
    line = String(d.body).split("\n").find((l) => l.startsWith(row)) ?? "";
    assert.ok(line, String(d.body));
    d.body = String(d.body).replace(row, forged);
    // The facts in the file are changed to agree: the audit is what counts.
    (d.facts as { writes: { after: number }[] }).writes[0]!.after = 0.61;
  });
  const refused = await user.run(["elog", "post", numbers.id], { env: CREDENTIALS });
  assert.equal(refused.code, 1, refused.stderr);
  assert.equal(refused.stdout.trim().split("\n").length, 1, refused.stdout);
  assert.match(
    refused.stdout,
    /not posted: the devices table differs from the audit's record of run [0-9a-f-]{36} \(the row of `SR:COR:H01:SETPT`\): edit only the text around it, or skip the draft; the draft is kept/,
  );
  // Rows taken out, or added, are refused the same way.
  await handEdit(numbers.path, (d) => (d.body = String(d.body).replace(`${forged}\n`, "")));
  const cut = await user.run(["elog", "post", numbers.id], { env: CREDENTIALS });
  assert.match(
    cut.stdout,
    /differs from the audit's record of run .* \(the row of `SR:COR:H01:SETPT`\)/,
  );
  await handEdit(numbers.path, (d) => {
    d.body = String(d.body).replace(
      "| --- | --- | --- | --- | --- | --- |\n",
      `| --- | --- | --- | --- | --- | --- |\n| \`SR:COR:H09:SETPT\` | 1 | 2 | 2 | x | no |\n${line}\n`,
    );
  });
  const added = await user.run(["elog", "post", numbers.id], { env: CREDENTIALS });
  assert.match(
    added.stdout,
    /differs from the audit's record of run .* \(rows were added or moved\)/,
  );
  // A row right under the last one would be the table's too.
  await handEdit(numbers.path, (d) => {
    d.body = String(d.body).replace("| `SR:COR:H09:SETPT` | 1 | 2 | 2 | x | no |\n", "")
      .replace(`${line}\n`, `${line}\n| \`SR:COR:H09:SETPT\` | 1 | 2 | 2 | x | no |\n`);
  });
  const under = await user.run(["elog", "post", numbers.id], { env: CREDENTIALS });
  assert.match(
    under.stdout,
    /differs from the audit's record of run .* \(rows were added or moved\)/,
  );
  assert.equal(olog.received.length, 0, "nothing sent");

  // Prose only: posted, marked as edited, the table as the audit holds it.
  const prose = await trimmed(user, 0.7);
  await handEdit(prose.path, (d) => {
    d.body = String(d.body).replace("**Plan:** Trim H01", "**Plan:** Trim H01 (the orbit drifted)");
  });
  const posted = await user.run(["elog", "post", prose.id], { env: CREDENTIALS });
  assert.equal(posted.code, 0, posted.stdout);
  const text = String(olog.created[0]?.description);
  assert.match(
    text,
    /^\*Edited by \S+ before it was posted; the devices table is as the audit records it\.\*\n\n\*\*Outcome:\*\*/,
  );
  assert.match(text, /\*\*Plan:\*\* Trim H01 \(the orbit drifted\)/);
  assert.ok(text.includes("| `SR:COR:H01:SETPT` | 0.6 | 0.7 | 0.7 |"), text);

  // Untouched: posted as it was made, with no mark.
  const plain = await trimmed(user, 0.6);
  const fine = await user.run(["elog", "post", plain.id], { env: CREDENTIALS });
  assert.equal(fine.code, 0, fine.stdout);
  assert.match(String(olog.created[1]?.description), /^\*\*Outcome:\*\* completed/);
});

Deno.test("a draft made under another state directory is not posted: its run is not in this audit", async () => {
  await using user = await setup();
  await using other = await setup();
  const foreign = await trimmed(other);
  const post = await user.run(["elog", "post", foreign.path], { env: CREDENTIALS });
  assert.equal(post.code, 1, post.stderr);
  assert.match(
    post.stdout,
    /not posted: run [0-9a-f-]{36} is not in the audit log in .*\/state\/audit: a draft made under another state directory is posted with that directory's config; the draft is kept/,
  );
  assert.equal(user.epics.ologService.received.length, 0);
  assert.equal(other.epics.ologService.received.length, 0);
});
