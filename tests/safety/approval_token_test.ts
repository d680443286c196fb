/** Approval tokens: issued with the state directory's key, bound to one plan, single-use, expiring. */
import assert from "node:assert/strict";
import { ApprovalTokens } from "../../src/safety/approval_token.ts";
import { keysExposedBy } from "../../src/safety/keys.ts";
import { tempDir } from "../support/temp.ts";

const PLAN = "a".repeat(64);
const OTHER = "b".repeat(64);
const SCOPE = { facility: "epics http://gw:8080/pvws", limits: "c".repeat(64) };

Deno.test("a token issued for a plan approves that plan and no other", async () => {
  await using dir = await tempDir();
  const tokens = new ApprovalTokens(dir.path, SCOPE);
  const { token } = await tokens.issue(PLAN, { ttlMs: 60_000 });
  assert.match(token, /^apv2\.a{16}\.[0-9a-f]{16}\.\d+\.[\w-]{16}\.[\w-]{43}$/);
  assert.equal((await tokens.check(token, PLAN)).ok, true);
  const other = await tokens.check(token, OTHER);
  assert.ok(
    !other.ok &&
      /approves plan aaaaaaaaaaaaaaaa…, not this plan bbbbbbbbbbbbbbbb…/.test(other.reason),
  );
});

Deno.test("a bare plan hash is not an approval", async () => {
  await using dir = await tempDir();
  const r = await new ApprovalTokens(dir.path, SCOPE).check(PLAN, PLAN);
  assert.ok(!r.ok && /^a plan hash is not an approval/.test(r.reason));
});

Deno.test("a token from another state directory's key is refused", async () => {
  await using a = await tempDir();
  await using b = await tempDir();
  const { token } = await new ApprovalTokens(a.path, SCOPE).issue(PLAN, { ttlMs: 60_000 });
  const r = await new ApprovalTokens(b.path, SCOPE).check(token, PLAN);
  assert.ok(!r.ok && /not issued for this plan by this installation/.test(r.reason));
});

Deno.test("a token expires, and a reusable one does not", async () => {
  await using dir = await tempDir();
  let now = Date.parse("2026-11-24T12:00:00Z");
  const tokens = new ApprovalTokens(dir.path, SCOPE, () => now);
  const { token } = await tokens.issue(PLAN, { ttlMs: 60_000 });
  const { token: kept } = await tokens.issue(PLAN, { ttlMs: 60_000, reusable: true });
  now += 61_000;
  const r = await tokens.check(token, PLAN);
  assert.ok(!r.ok && /expired at 2026-11-24T12:01:00\.000Z/.test(r.reason));
  const k = await tokens.check(kept, PLAN);
  assert.ok(k.ok && k.claims.expiresAt === undefined);
});

Deno.test("a token is consumed once, even by processes racing", async () => {
  await using dir = await tempDir();
  const tokens = new ApprovalTokens(dir.path, SCOPE);
  const { claims } = await tokens.issue(PLAN, { ttlMs: 60_000 });
  const results = await Promise.all(
    [0, 1, 2, 3].map(() => new ApprovalTokens(dir.path, SCOPE).consume(claims)),
  );
  assert.equal(results.filter((r) => r.ok).length, 1);
});

Deno.test("the key file is created private, and one key serves racing first uses", async () => {
  await using dir = await tempDir();
  const issued = await Promise.all(
    [0, 1, 2].map(() => new ApprovalTokens(dir.path, SCOPE).issue(PLAN, { ttlMs: 60_000 })),
  );
  for (const { token } of issued) {
    assert.ok((await new ApprovalTokens(dir.path, SCOPE).check(token, PLAN)).ok);
  }
  assert.equal((await Deno.stat(`${dir.path}/keys/approval.key`)).mode! & 0o777, 0o600);
  assert.equal((await Deno.stat(`${dir.path}/keys`)).mode! & 0o777, 0o700);
});

Deno.test("a sandbox directory that contains or lies inside the keys directory exposes them", () => {
  const state = "/srv/op/.local/state/accel-agent";
  assert.match(
    keysExposedBy(state, [{ path: "/srv/op", what: "[sandbox] data_dirs" }]) ?? "",
    /\[sandbox\] data_dirs \/srv\/op gives the Python sandbox a read of .*\/keys/,
  );
  assert.ok(keysExposedBy(state, [{ path: `${state}/keys/x`, what: "d" }]));
  assert.equal(keysExposedBy(state, [{ path: `${state}/scans`, what: "d" }]), undefined);
  assert.equal(keysExposedBy(state, [{ path: "/srv/op/data", what: "d" }]), undefined);
});

Deno.test("the token approver approves until the token is spent, spends it once, and rejects the replay", async () => {
  const { TokenApprover } = await import("../../src/safety/approval.ts");
  await using dir = await tempDir();
  const tokens = new ApprovalTokens(dir.path, SCOPE);
  const { token, claims } = await tokens.issue(PLAN, { ttlMs: 60_000 });
  const shown = {
    hash: PLAN,
    plan: { description: "x", actions: [] },
  } as unknown as import("../../src/plan_model/preflighted.ts").PreflightedPlan;
  const first = await new TokenApprover(token, tokens).decide(shown);
  assert.equal(first.decision, "approved");
  assert.deepEqual(first.token, {
    id: claims.id,
    expiresAt: new Date(claims.expiresAt as number).toISOString(),
    reusable: false,
  });
  // Not spent by approving: a run that fails before it writes leaves it usable.
  const before = await new TokenApprover(token, tokens).decide(shown);
  assert.equal(before.decision, "approved");
  assert.equal(await first.spend?.(), undefined, "spent when the plan starts writing");
  // Two runs approved with one token: the second to start writing is refused.
  assert.match((await before.spend?.()) ?? "", /^the token was already used at /);
  const again = await new TokenApprover(token, tokens).decide(shown);
  assert.equal(again.decision, "rejected");
  assert.match(again.reason ?? "", /^approval refused: the token was already used at /);
});

Deno.test("a token shown against one facility is refused on another sharing the state directory", async () => {
  await using dir = await tempDir();
  const { token } = await new ApprovalTokens(dir.path, SCOPE).issue(PLAN, { ttlMs: 60_000 });
  const elsewhere = { ...SCOPE, facility: "epics http://other-gw:8080/pvws" };
  const r = await new ApprovalTokens(dir.path, elsewhere).check(token, PLAN);
  assert.ok(
    !r.ok &&
      /^the token was issued against another facility, not this configuration's epics http:\/\/other-gw:8080\/pvws; /
        .test(r.reason),
    JSON.stringify(r),
  );
  assert.ok((await new ApprovalTokens(dir.path, { ...SCOPE }).check(token, PLAN)).ok);
});

Deno.test("a token shown against one limits file is refused once other limits are in force", async () => {
  await using dir = await tempDir();
  const { token } = await new ApprovalTokens(dir.path, SCOPE).issue(PLAN, { ttlMs: 60_000 });
  const r = await new ApprovalTokens(dir.path, { ...SCOPE, limits: "d".repeat(64) }).check(
    token,
    PLAN,
  );
  assert.ok(!r.ok && /^the token was issued against other safety limits/.test(r.reason));
});

Deno.test("a token whose scope field is edited to this facility's still fails its signature", async () => {
  await using dir = await tempDir();
  const there = new ApprovalTokens(dir.path, {
    ...SCOPE,
    facility: "tango http://r/tango/rest v11",
  });
  const { token } = await there.issue(PLAN, { ttlMs: 60_000 });
  // The scope field only names which part differs; copy this facility's into the token.
  const { token: here } = await new ApprovalTokens(dir.path, SCOPE).issue(OTHER, { ttlMs: 1 });
  const parts = token.split(".");
  parts[2] = here.split(".")[2] as string;
  const r = await new ApprovalTokens(dir.path, SCOPE).check(parts.join("."), PLAN);
  assert.ok(
    !r.ok && /not issued for this plan by this installation/.test(r.reason),
    r.ok ? "" : r.reason,
  );
});

Deno.test("a token of the earlier form, bound to the plan alone, is refused with what to do", async () => {
  await using dir = await tempDir();
  const old = `apv1.${PLAN.slice(0, 16)}.9999999999.AAAAAAAAAAAAAAAA.${"A".repeat(43)}`;
  const r = await new ApprovalTokens(dir.path, SCOPE).check(old, PLAN);
  assert.ok(
    !r.ok && /^an apv1 token approves a plan without the facility and limits .* plan show PLAN$/
      .test(r.reason),
  );
});

Deno.test("a token that expires between its check and the plan's first write is not spent and runs nothing", async () => {
  const { TokenApprover } = await import("../../src/safety/approval.ts");
  await using dir = await tempDir();
  let now = Date.parse("2026-11-24T12:00:00Z");
  const tokens = new ApprovalTokens(dir.path, SCOPE, () => now);
  const { token, claims } = await tokens.issue(PLAN, { ttlMs: 60_000 });
  const shown = {
    hash: PLAN,
    plan: { description: "x", actions: [] },
  } as unknown as import("../../src/plan_model/preflighted.ts").PreflightedPlan;
  const approved = await new TokenApprover(token, tokens).decide(shown);
  assert.equal(approved.decision, "approved");
  // The executor's second preflight takes long (a gateway answering late): the token runs out.
  now += 61_000;
  assert.match((await approved.spend?.()) ?? "", /^the token expired at 2026-11-24T12:01:00\.000Z/);
  assert.equal(await tokens.usedAt(claims), undefined, "not recorded as used");
});
