/**
 * The audit's off-console copy, attacked: collectors that go down, hang,
 * reset, accept slowly or answer errors, a damaged cursor, two senders, and
 * a process killed mid-send. Whatever happens, every entry reaches the
 * collector once it works, no entry is lost, a copy that may repeat an
 * earlier one says so (`resent="1"`), and appending never waits on it.
 */
import assert from "node:assert/strict";
import { AuditLog } from "../../src/safety/audit.ts";
import { AuditForwarder, type ForwardConfig } from "../../src/safety/audit_forward.ts";
import { readRecordsAfter } from "../../src/safety/forward_cursor.ts";
import { octetFrame, syslogMessage } from "../../src/safety/syslog.ts";
import { FakeSyslog, parse, until } from "../support/facility/fake_syslog.ts";
import { tempDir } from "../support/temp.ts";

const RECORD = {
  operator: "op",
  host: "console-1",
  configHash: "c".repeat(64),
  planHash: "p".repeat(64),
  plan: { description: "x", actions: [] },
  decision: "approved",
  decidedBy: "terminal",
  status: "completed",
};

function syslogTo(port: number, timeoutMs = 30_000, retryMs = 50): ForwardConfig {
  return {
    target: { kind: "syslog", host: "127.0.0.1", port },
    delivery: { facility: 16, appName: "accel-agent", maxMessageBytes: 65536, timeoutMs },
    retryMs,
  };
}

async function setUp(collectors: ForwardConfig[]) {
  const dir = await tempDir("accel-agent-forward-");
  const auditDir = `${dir.path}/audit`;
  const reports: string[] = [];
  const make = () =>
    new AuditForwarder({
      stateDir: dir.path,
      auditDir,
      collectors,
      report: (l) => reports.push(l),
    });
  const forwarder = make();
  const log = new AuditLog(auditDir, Date.now, {
    onAppended: (_, seq) => forwarder.appended(seq),
  });
  const append = async (n: number) => {
    for (let i = 0; i < n; i++) await log.append({ ...RECORD, status: "completed" });
  };
  return { dir, auditDir, reports, forwarder, log, append, make };
}

/** Every entry of the audit reached the collector intact; no entry has two copies without the mark. */
async function assertComplete(
  collector: { messages: { sd: Record<string, string> }[] },
  auditDir: string,
) {
  const { entries, total } = await readRecordsAfter(auditDir, { sent: 0, hash: "", attempted: 0 });
  assert.equal(entries.length, total);
  for (const { seq, entry } of entries) {
    const copies = collector.messages.filter((m) => Number(m.sd.seq) === seq);
    assert.ok(copies.length >= 1, `entry ${seq} never arrived`);
    for (const c of copies) assert.equal(c.sd.hash, entry.hash, `entry ${seq}'s hash`);
    const unmarked = copies.filter((c) => c.sd.resent !== "1");
    assert.ok(unmarked.length <= 1, `entry ${seq} arrived ${unmarked.length} times unmarked`);
  }
}

/** The highest entry the forwarder has handed to the collector, from its cursor. */
function attempted(stateDir: string, name: string): number {
  try {
    return JSON.parse(Deno.readTextFileSync(`${stateDir}/audit.forward/${name}.json`)).attempted;
  } catch {
    return 0;
  }
}

/** Waits until every entry of the audit has arrived at least once. */
async function allArrive(collector: FakeSyslog, auditDir: string) {
  const { total } = await readRecordsAfter(auditDir, { sent: 0, hash: "", attempted: 0 });
  await until(() => new Set(collector.seqs()).size >= total, `all ${total} entries`);
}

Deno.test("every audit entry reaches a syslog collector as it is written, in order, once", async () => {
  await using collector = FakeSyslog.start();
  const s = await setUp([syslogTo(collector.port)]);
  await using _ = s.dir;
  await s.append(5);
  await s.forwarder.close();
  await collector.received(5);
  assert.deepEqual(collector.seqs(), [1, 2, 3, 4, 5]);
  assert.ok(collector.messages.every((m) => m.sd.resent === undefined));
  assert.equal(collector.messages[0]?.pri, 16 * 8 + 5, "local0.notice");
  assert.deepEqual(collector.broken, []);
  assert.deepEqual(s.reports, []);
  await assertComplete(collector, s.auditDir);
});

Deno.test("a collector that goes down is said once; what it missed arrives when it is back", async () => {
  await using collector = FakeSyslog.start();
  const s = await setUp([syslogTo(collector.port)]);
  await using _ = s.dir;
  await s.append(2);
  await collector.received(2);
  collector.stop();
  // Appends go on while it is down: none waits for it.
  await s.append(3);
  await until(() => s.reports.length >= 1, "the failure report");
  assert.match(
    s.reports[0] ?? "",
    /^audit forwarding to syslog 127\.0\.0\.1:\d+ failed \(.+\); nothing is held up/,
  );
  collector.restart();
  await allArrive(collector, s.auditDir);
  await until(() => s.reports.some((r) => /works again/.test(r)), "the recovery report");
  assert.equal(s.reports.filter((r) => /failed/.test(r)).length, 1, s.reports.join("\n"));
  await assertComplete(collector, s.auditDir);
});

Deno.test("a collector that accepts and never reads holds up no append; the records go when it reads again", async () => {
  await using collector = FakeSyslog.start();
  collector.mode = "hang";
  const s = await setUp([syslogTo(collector.port, 300)]);
  await using _ = s.dir;
  await s.append(3);
  // Appended while the only connection is open and unread.
  assert.equal(collector.messages.length, 0);
  await until(() => s.reports.length >= 1, "the failure report");
  assert.match(s.reports[0] ?? "", /failed \(no confirmation from the collector within 300 ms\)/);
  collector.mode = "normal";
  await allArrive(collector, s.auditDir);
  await assertComplete(collector, s.auditDir);
});

/** The resetting collector (a C socket's close with data unread is a reset); its port. */
async function resettingCollector(): Promise<{ port: number } & AsyncDisposable> {
  const script = new URL("../support/facility/resetting_collector.py", import.meta.url).pathname;
  const child = new Deno.Command("python3", { args: [script], stdout: "piped" }).spawn();
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the resetting collector did not start");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    port: Number(text.trim()),
    async [Symbol.asyncDispose]() {
      child.kill("SIGKILL");
      await child.status;
      await child.stdout.cancel().catch(() => {});
    },
  };
}

Deno.test("a collector that resets the connection: nothing is lost, the records sent again are marked", async () => {
  const resetting = await resettingCollector();
  const s = await setUp([syslogTo(resetting.port)]);
  await using _ = s.dir;
  await s.append(4);
  await until(() => s.reports.length >= 1, "the failure report");
  assert.match(s.reports[0] ?? "", /failed \(.*(reset|Broken pipe|closed the connection).*\)/i);
  // Every entry has been handed to the resetting collector at least once.
  await until(
    () => attempted(s.dir.path, `syslog-127.0.0.1_${resetting.port}`) === 4,
    "4 attempted",
  );
  // The collector comes back, on the same port, and reads.
  await resetting[Symbol.asyncDispose]();
  await using collector = FakeSyslog.start(resetting.port);
  await allArrive(collector, s.auditDir);
  await assertComplete(collector, s.auditDir);
  assert.ok(collector.messages.every((m) => m.sd.resent === "1"), "each may have been seen before");
});

Deno.test("a collector slow to accept gets the early copies late and the later ones marked", async () => {
  await using collector = FakeSyslog.start();
  collector.mode = "slow-accept";
  const s = await setUp([syslogTo(collector.port, 300)]);
  await using _ = s.dir;
  await s.append(3);
  await until(() => s.reports.length >= 1, "the failure report");
  // The queued connections are served now, beside the retries: copies may come twice.
  collector.mode = "normal";
  await allArrive(collector, s.auditDir);
  await s.append(1);
  await allArrive(collector, s.auditDir);
  await assertComplete(collector, s.auditDir);
});

Deno.test("a damaged cursor: every record is sent again, each marked, and none is lost", async () => {
  await using collector = FakeSyslog.start();
  const s = await setUp([syslogTo(collector.port)]);
  await using _ = s.dir;
  await s.append(3);
  await s.forwarder.close();
  await collector.received(3);
  await until(() => s.forwarder.status().every((c) => !c.busy), "the forwarder at rest");
  const cursor = `${s.dir.path}/audit.forward/syslog-127.0.0.1_${collector.port}.json`;
  await Deno.writeTextFile(cursor, '{"sent": "lots"');
  await s.append(1);
  await s.forwarder.close();
  await until(() => collector.messages.length >= 7, "3 + 4 messages");
  assert.match(s.reports.join("\n"), /cursor .* is damaged; sending all 4 records again, marked/);
  assert.deepEqual(collector.messages.slice(3).map((m) => [Number(m.sd.seq), m.sd.resent]), [
    [1, "1"],
    [2, "1"],
    [3, "1"],
    [4, "1"],
  ]);
  await assertComplete(collector, s.auditDir);
});

Deno.test("an audit replaced under the cursor is sent from its start, marked", async () => {
  await using collector = FakeSyslog.start();
  const s = await setUp([syslogTo(collector.port)]);
  await using _ = s.dir;
  await s.append(2);
  await s.forwarder.close();
  await collector.received(2);
  await Deno.remove(s.auditDir, { recursive: true });
  const fresh = new AuditLog(s.auditDir, Date.now, {
    onAppended: (_, n) => s.forwarder.appended(n),
  });
  await fresh.append({ ...RECORD, status: "completed" });
  await s.forwarder.close();
  await until(() => collector.messages.length >= 3, "the new chain's entry");
  assert.match(s.reports.join("\n"), /no longer holds the cursor's entry/);
  assert.deepEqual(collector.messages[2]?.sd.seq, "1");
  assert.equal(collector.messages[2]?.sd.resent, "1");
});

Deno.test("two senders of one state directory send no unmarked copy twice", async () => {
  await using collector = FakeSyslog.start();
  const s = await setUp([syslogTo(collector.port)]);
  await using _ = s.dir;
  const other = s.make();
  const log2 = new AuditLog(s.auditDir, Date.now, { onAppended: (_, n) => other.appended(n) });
  await Promise.all([
    s.append(4),
    (async () => {
      for (let i = 0; i < 4; i++) await log2.append({ ...RECORD, status: "completed" });
    })(),
  ]);
  await Promise.all([s.forwarder.close(), other.close()]);
  await allArrive(collector, s.auditDir);
  await assertComplete(collector, s.auditDir);
});

Deno.test("a process killed mid-send: its records are sent again by the next, marked", async () => {
  await using collector = FakeSyslog.start();
  collector.mode = "hang";
  await using dir = await tempDir("accel-agent-forward-");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../support/forward_child.ts", import.meta.url).pathname,
      dir.path,
      String(collector.port),
      "3",
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const out = new Response(child.stdout).text();
  await until(() => collector.accepted >= 1, "the child's connection");
  child.kill("SIGKILL");
  await child.status;
  await out;
  collector.mode = "normal";
  const reports: string[] = [];
  const next = new AuditForwarder({
    stateDir: dir.path,
    auditDir: `${dir.path}/audit`,
    collectors: [syslogTo(collector.port)],
    report: (l) => reports.push(l),
  });
  next.catchUp();
  await allArrive(collector, `${dir.path}/audit`);
  await assertComplete(collector, `${dir.path}/audit`);
  // The child had handed over at least the first; whatever it handed over comes marked.
  assert.equal(collector.messages[0]?.sd.resent, "1");
});

Deno.test("an HTTP collector that answers 503 gets the records again, marked, once it answers 200", async () => {
  const bodies: { status: number; lines: { seq: number; resent: boolean }[] }[] = [];
  let status = 503;
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const lines = (await req.text()).trim().split("\n").map((l) => JSON.parse(l));
      const answer = status;
      bodies.push({ status: answer, lines });
      return new Response(null, { status: answer });
    },
  );
  const s = await setUp([{
    target: { kind: "http", url: `http://127.0.0.1:${server.addr.port}/audit` },
    delivery: { facility: 16, appName: "accel-agent", maxMessageBytes: 65536, timeoutMs: 30_000 },
    retryMs: 50,
  }]);
  await using _ = s.dir;
  await s.append(2);
  await until(() => s.reports.length >= 1, "the failure report");
  const name = `http-http___127.0.0.1_${server.addr.port}_audit`;
  await until(() => attempted(s.dir.path, name) === 2, "2 attempted");
  assert.match(
    s.reports[0] ?? "",
    /http http:\/\/127\.0\.0\.1:\d+\/audit failed \(answered HTTP 503\)/,
  );
  status = 200;
  await until(() => s.reports.some((r) => /works again/.test(r)), "the recovery");
  const ok = bodies.filter((b) => b.status === 200).flatMap((b) => b.lines);
  assert.deepEqual(ok.map((l) => l.seq), [1, 2]);
  assert.equal(ok[0]?.resent, true, "the first was offered before");
  for (const seq of [1, 2]) {
    const unmarked = bodies.flatMap((b) => b.lines).filter((l) => l.seq === seq && !l.resent);
    assert.ok(unmarked.length <= 1, `entry ${seq} unmarked ${unmarked.length} times`);
  }
});

Deno.test("a message is octet-counted in bytes, its structured data escaped, a huge entry slimmed", () => {
  const entry = {
    ...RECORD,
    time: "2026-11-28T10:00:00.000Z",
    host: "console 1",
    prevHash: "0",
    hash: 'a"b]c\\d',
    decision: "rejected",
    plan: { description: "Δ".repeat(100_000) },
  };
  const msg = syslogMessage({ seq: 7, entry, resent: true }, {
    facility: 16,
    appName: "accel-agent",
    maxBytes: 4096,
  });
  const frame = new TextDecoder().decode(octetFrame(msg));
  const [len, ...rest] = frame.split(" ");
  assert.equal(Number(len), new TextEncoder().encode(rest.join(" ")).length);
  const m = parse(msg);
  assert.equal(m.pri, 16 * 8 + 4, "a rejection is a warning");
  assert.deepEqual(m.sd, { seq: "7", hash: 'a"b]c\\d', resent: "1", truncated: "1" });
  assert.deepEqual(m.entry.plan, { truncated: true, bytes: JSON.stringify(entry.plan).length });
  assert.match(msg, /^<132>1 2026-11-28T10:00:00\.000Z console1 accel-agent - rejected \[/);
});

Deno.test("a cursor or a cursor lock that is a FIFO: said in one line, nothing hangs, every record arrives marked", async () => {
  await using collector = FakeSyslog.start();
  const s = await setUp([syslogTo(collector.port, 30_000, 20)]);
  await using _ = s.dir;
  await s.append(2);
  await s.forwarder.close();
  await collector.received(2);
  await until(() => s.forwarder.status().every((c) => !c.busy), "the forwarder at rest");
  const cursor = `${s.dir.path}/audit.forward/syslog-127.0.0.1_${collector.port}.json`;
  await Deno.remove(cursor);
  await new Deno.Command("mkfifo", { args: [cursor] }).output();
  await s.append(1);
  await s.forwarder.close();
  await until(() => collector.messages.length >= 5, "2 + 3 messages");
  assert.match(
    s.reports.join("\n"),
    /cursor .* cannot be read \(.*FIFO.*\); sending all 3 records/,
  );
  assert.ok(collector.messages.slice(2).every((m) => m.sd.resent === "1"));
  await assertComplete(collector, s.auditDir);
  // The lock beside it: refused in one line, the records wait until it is a file again.
  await until(() => s.forwarder.status().every((c) => !c.busy), "the forwarder at rest");
  await Deno.remove(`${cursor}.lock`);
  await new Deno.Command("mkfifo", { args: [`${cursor}.lock`] }).output();
  await s.append(1);
  await until(() => /\.lock: is a FIFO/.test(s.reports.join("\n")), "the lock refused");
  await Deno.remove(`${cursor}.lock`);
  await s.forwarder.close();
  await until(() => new Set(collector.seqs()).size >= 4, "the fourth entry");
  await assertComplete(collector, s.auditDir);
});

Deno.test("a cursor removed after records were sent: every record is sent again marked, none twice unmarked", async () => {
  await using collector = FakeSyslog.start();
  const s = await setUp([syslogTo(collector.port)]);
  await using _ = s.dir;
  await s.append(3);
  await s.forwarder.close();
  await collector.received(3);
  await until(() => s.forwarder.status().every((c) => !c.busy), "the forwarder at rest");
  await Deno.remove(`${s.dir.path}/audit.forward/syslog-127.0.0.1_${collector.port}.json`);
  await s.append(1);
  await s.forwarder.close();
  await until(() => collector.messages.length >= 7, "3 + 4 messages");
  assert.match(s.reports.join("\n"), /cursor .* is missing; sending all 4 records again, marked/);
  assert.ok(collector.messages.slice(3).every((m) => m.sd.resent === "1"));
  await assertComplete(collector, s.auditDir);
});
