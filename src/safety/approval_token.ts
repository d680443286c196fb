/**
 * Approval tokens: what an operator hands `plan run --approved-hash` to run a
 * plan without a prompt. A token is
 * `apv2.<plan hash, 16 hex>.<scope, 16 hex>.<expiry>.<id>.<mac>`, the MAC an
 * HMAC-SHA256 with the state directory's approval key over the plan's full
 * hash, the facility and the limits it was shown against, the expiry and
 * the id. The scope (8 hex of the facility's digest, 8 of the limits') only
 * lets a refusal say which of the two differs; the MAC decides. So a token
 * shown against one facility (control system kind and endpoint) or one
 * limits file runs nowhere else, even where both share the state directory.
 * Only this program, on the operator's `plan show`, issues one; the model
 * and the sandbox never hold the key, so they cannot compute one. A token is
 * single-use (its id is recorded under `<state>/approvals/used/` before the
 * plan runs; creating that record is atomic, so of two processes racing
 * with one token one wins) and expires, unless the operator issued it for a
 * reusable procedure.
 *
 * @module
 */
import { KeyError, loadKey, macOf, sameText } from "./keys.ts";
import { errorMessage } from "../util/errors.ts";
import { readJson } from "../util/json_file.ts";
import { sha256Hex } from "../util/hash.ts";
import { z } from "zod";
import { readRegularText, refuseIrregular } from "../util/bounded_read.ts";

/** What a valid token says. */
export interface TokenClaims {
  /** The full hash of the plan it approves. */
  planHash: string;
  /** Milliseconds since the epoch; undefined for a reusable procedure. */
  expiresAt?: number;
  /** Unique per token: the single-use record's name. */
  id: string;
}

export type TokenCheck =
  | { ok: true; claims: TokenClaims }
  | { ok: false; reason: string };

/** What a token is bound to besides the plan: where and under which limits it was shown. */
export interface TokenScope {
  /** The facility: the control system's kind and endpoint (`facilityIdentity`). */
  facility: string;
  /** A digest of the limits in force (the limits file's SHA-256; "" for none). */
  limits: string;
}

const PREFIX = "apv2";
const SHAPE =
  /^apv2\.([0-9a-f]{16})\.([0-9a-f]{8})([0-9a-f]{8})\.(r|\d{1,12})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/;
const OLD_SHAPE = /^apv1\.[0-9a-f]{16}\.(r|\d{1,12})\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{43}$/;
const HOW = "the operator issues a token with accel-agent plan show PLAN";

/** Issues, checks and consumes the tokens of one state directory, for one facility and limits. */
export class ApprovalTokens {
  #key?: Promise<CryptoKey>;
  #tags?: Promise<{ facility: string; limits: string }>;

  constructor(
    readonly stateDir: string,
    readonly scope: TokenScope,
    readonly now: () => number = Date.now,
  ) {}

  /** Where single-use tokens are recorded as used. */
  get usedDir(): string {
    return `${this.stateDir}/approvals/used`;
  }

  /** A new token for `planHash`: valid `ttlMs`, or until the key changes when `reusable`. */
  async issue(
    planHash: string,
    opts: { ttlMs: number; reusable?: boolean },
  ): Promise<{ token: string; claims: TokenClaims }> {
    const id = base64urlId();
    const expiresAt = opts.reusable ? undefined : this.now() + opts.ttlMs;
    const exp = expiresAt === undefined ? "r" : String(Math.ceil(expiresAt / 1000));
    const mac = await macOf(await this.#keyNow(), signed(planHash, this.scope, exp, id));
    const tags = await this.#scopeTags();
    const scope = `${tags.facility}${tags.limits}`;
    return {
      token: `${PREFIX}.${planHash.slice(0, 16)}.${scope}.${exp}.${id}.${mac}`,
      claims: {
        planHash,
        ...(expiresAt === undefined ? {} : { expiresAt: Number(exp) * 1000 }),
        id,
      },
    };
  }

  /** Whether `token` approves the plan whose hash is `planHash` now (use is not recorded). */
  async check(token: string, planHash: string): Promise<TokenCheck> {
    const t = token.trim();
    if (/^[0-9a-f]{64}$/i.test(t)) {
      return no(`a plan hash is not an approval; ${HOW}`);
    }
    if (OLD_SHAPE.test(t)) {
      return no(
        "an apv1 token approves a plan without the facility and limits it was shown against; " +
          HOW,
      );
    }
    const m = SHAPE.exec(t);
    if (!m) return no(`not an approval token (apv2.…); ${HOW}`);
    const [, hash16 = "", facility = "", limits = "", exp = "", id = "", mac = ""] = m;
    if (hash16 !== planHash.slice(0, 16)) {
      return no(
        `the token approves plan ${hash16}…, not this plan ${planHash.slice(0, 16)}… ` +
          `(a different plan, or the plan was changed after it was approved)`,
      );
    }
    const tags = await this.#scopeTags();
    if (facility !== tags.facility) {
      return no(
        `the token was issued against another facility, not this configuration's ` +
          `${this.scope.facility}; a token runs its plan only on the facility it was shown ` +
          `against; ${HOW}`,
      );
    }
    if (limits !== tags.limits) {
      return no(
        "the token was issued against other safety limits than those in force (the limits " +
          `file changed since, or another one is configured); ${HOW}`,
      );
    }
    const expected = await macOf(await this.#keyNow(), signed(planHash, this.scope, exp, id));
    if (!sameText(expected, mac)) {
      return no(
        "the token was not issued for this plan by this installation (its signature does not " +
          `match the approval key in ${this.stateDir}/keys); ${HOW}`,
      );
    }
    const expiresAt = exp === "r" ? undefined : Number(exp) * 1000;
    if (expiresAt !== undefined && this.now() >= expiresAt) {
      return no(`the token expired at ${new Date(expiresAt).toISOString()}; ${HOW}`);
    }
    return { ok: true, claims: { planHash, ...(expiresAt ? { expiresAt } : {}), id } };
  }

  /** When a single-use token was used, or undefined while it is unused (or reusable). */
  async usedAt(claims: TokenClaims): Promise<string | undefined> {
    if (claims.expiresAt === undefined) return undefined;
    const path = `${this.usedDir}/${claims.id}`;
    try {
      // A record that is no file (a FIFO would block its read) is said, not waited on.
      if (!(await Deno.stat(path)).isFile) await refuseIrregular(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
    return await usedAt(path);
  }

  /**
   * Records a single-use token as used; false when it already was. The
   * record is synced to disk before this returns.
   */
  async consume(claims: TokenClaims): Promise<{ ok: true } | { ok: false; usedAt: string }> {
    await Deno.mkdir(this.usedDir, { recursive: true, mode: 0o700 });
    const path = `${this.usedDir}/${claims.id}`;
    const at = new Date(this.now()).toISOString();
    // Written aside and linked into place: a write that fails (a full disk) leaves no record
    // behind, so the token is as unspent as the refusal says; the link fails where one exists,
    // so exactly one of several processes with the same token gets past here.
    const tmp = `${this.usedDir}/.${claims.id}.${crypto.randomUUID().slice(0, 8)}.tmp`;
    try {
      await Deno.writeTextFile(tmp, `${JSON.stringify({ at, ...claims })}\n`, {
        createNew: true,
        mode: 0o600,
      });
      {
        using file = await Deno.open(tmp, { read: true });
        await file.sync();
      }
      try {
        await Deno.link(tmp, path);
      } catch (e) {
        if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
        return { ok: false, usedAt: await usedAt(path) };
      }
    } finally {
      await Deno.remove(tmp).catch(() => {});
    }
    return { ok: true };
  }

  /** 8 hex of the facility's digest and 8 of the limits': the token's scope field. */
  #scopeTags(): Promise<{ facility: string; limits: string }> {
    this.#tags ??= Promise.all([sha256Hex(this.scope.facility), sha256Hex(this.scope.limits)])
      .then(([f, l]) => ({ facility: f.slice(0, 8), limits: l.slice(0, 8) }));
    return this.#tags;
  }

  #keyNow(): Promise<CryptoKey> {
    this.#key ??= loadKey(this.stateDir, "approval");
    return this.#key.catch((e) => {
      this.#key = undefined;
      throw e instanceof KeyError ? e : new KeyError(errorMessage(e));
    });
  }
}

function signed(planHash: string, scope: TokenScope, exp: string, id: string): string {
  return `accel-agent approval v2\n${planHash}\n${JSON.stringify(scope.facility)}\n` +
    `${JSON.stringify(scope.limits)}\n${exp}\n${id}`;
}

function no(reason: string): TokenCheck {
  return { ok: false, reason };
}

function base64urlId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_");
}

/** A used-token record, as far as its time of use is read back. */
const UsedSchema = z.looseObject({ at: z.string() });

async function usedAt(path: string): Promise<string> {
  try {
    const read = readJson(UsedSchema, await readRegularText(path, 64 << 10));
    return read.ok ? read.value.at : "an earlier time";
  } catch {
    return "an earlier time";
  }
}
