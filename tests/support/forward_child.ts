/**
 * Appends N audit entries to DIR/audit with forwarding to a syslog collector
 * on 127.0.0.1:PORT, then waits for the forwarding to settle:
 * `deno run -A forward_child.ts DIR PORT N`. The forwarding test kills it
 * while a delivery is in flight.
 *
 * @module
 */
import { AuditLog } from "../../src/safety/audit.ts";
import { AuditForwarder } from "../../src/safety/audit_forward.ts";

const [dir, port, n] = Deno.args as [string, string, string];
const forwarder = new AuditForwarder({
  stateDir: dir,
  auditDir: `${dir}/audit`,
  collectors: [{
    target: { kind: "syslog", host: "127.0.0.1", port: Number(port) },
    delivery: { facility: 16, appName: "accel-agent", maxMessageBytes: 65536, timeoutMs: 600_000 },
    retryMs: 600_000,
  }],
  report: (line) => console.error(line),
});
const log = new AuditLog(`${dir}/audit`, Date.now, {
  onAppended: (_, seq) => forwarder.appended(seq),
});
for (let i = 0; i < Number(n); i++) {
  await log.append({
    operator: "child",
    host: "h",
    configHash: "c",
    planHash: "p",
    plan: {},
    decision: "approved",
    decidedBy: "test",
    status: "completed",
  });
}
console.log("appended");
await forwarder.close();
