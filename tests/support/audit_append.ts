/**
 * Appends N audit entries to DIR: `deno run -A audit_append.ts DIR N`, for
 * the test that several processes keep one chain.
 *
 * @module
 */
import { AuditLog } from "../../src/safety/audit.ts";

const [dir, n] = Deno.args;
const log = new AuditLog(dir as string);
for (let i = 0; i < Number(n); i++) {
  await log.append({
    operator: `pid ${Deno.pid}`,
    host: "h",
    configHash: "c",
    planHash: "p",
    plan: {},
    decision: "approved",
    decidedBy: "test",
    status: `entry ${i}`,
  });
}
