/**
 * Posting to Phoebus Olog (spec §f.4): `PUT /logs?markup=commonmark` with
 * the entry as JSON, or `PUT /logs/multipart` (parts `logEntry` and
 * `files`, the attachments listed in the entry in the same order) when files
 * go with it. Olog takes writes only with credentials (Basic, from the
 * variables `[epics] username_env`/`password_env` name); logbooks and tags
 * must exist there, or it answers 400.
 *
 * Each entry carries the property `AccelAgent` with the attribute `draft` =
 * the draft's id, so `find` can ask `GET /logs/search?properties=…` whether
 * a post whose reply was lost reached Olog (Olog indexes a new entry with a
 * refresh, so the search sees it at once).
 *
 * Nothing from Olog is trusted: every reply is read up to `[epics]
 * olog_max_bytes`, redirects are not followed (credentials go to the
 * configured host only), each call has the service's deadline.
 *
 * @module
 */
import { z } from "zod";
import { VERSION } from "../../version.ts";
import { errorMessage } from "../../util/errors.ts";
import { timeoutSignal, type Timers } from "../../util/misc.ts";
import { readCapped, readErrorText } from "../capped_body.ts";
import { looksLikeHtml } from "../reply.ts";
import {
  DRAFT_ATTRIBUTE,
  DRAFT_PROPERTY,
  type Logbook,
  type LogbookEntry,
  type PostedEntry,
  UncertainPostError,
} from "../logbook.ts";

export interface OlogPostOptions {
  /** `[epics] olog_url`, e.g. `https://olog:8181/Olog`. */
  base: string;
  /** The Authorization header; posting is refused without one. */
  authorization?: string;
  timeoutMs: number;
  maxBytes: number;
  timers?: Timers;
}

/** An Olog entry id (a Java long): digits, as a number or a string. */
const EntryId = z.union([
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  z.string().regex(/^\d{1,19}$/),
]);

/** What a created entry's reply must hold: its id. */
const CreatedSchema = z.looseObject({ id: EntryId });

const FoundSchema = z.array(z.looseObject({
  id: z.union([z.number(), z.string()]).nullish(),
  properties: z.array(z.looseObject({
    name: z.unknown(),
    attributes: z.array(z.looseObject({ name: z.unknown(), value: z.unknown() })).nullish(),
  })).nullish(),
}));

export class OlogLogbook implements Logbook {
  readonly kind = "olog";
  readonly #o: OlogPostOptions;

  constructor(opts: OlogPostOptions) {
    this.#o = { ...opts, base: opts.base.replace(/\/+$/, "") };
  }

  get where(): string {
    return `Olog at ${this.#o.base}`;
  }

  async find(draftId: string, signal?: AbortSignal): Promise<string | undefined> {
    const q = new URLSearchParams({
      properties: `${DRAFT_PROPERTY}.${DRAFT_ATTRIBUTE}.${draftId}`,
      size: "20",
    });
    const text = await this.#send("GET", `/logs/search?${q}`, undefined, signal);
    let logs: unknown;
    try {
      const json = JSON.parse(text);
      logs = Array.isArray(json) ? json : json?.logs;
    } catch (e) {
      throw new Error(`${this.where} answered the search with no JSON (${errorMessage(e)})`);
    }
    const parsed = FoundSchema.safeParse(logs ?? []);
    if (!parsed.success) {
      throw new Error(`${this.where} answered the search with something other than log entries`);
    }
    // The search matches by wildcard; only an exact property counts.
    const hit = parsed.data.find((log) =>
      (log.properties ?? []).some((p) =>
        p.name === DRAFT_PROPERTY &&
        (p.attributes ?? []).some((a) => a.name === DRAFT_ATTRIBUTE && a.value === draftId)
      )
    );
    if (hit?.id === undefined || hit.id === null) return undefined;
    // The id is kept in the draft and the audit: only an id Olog could have given counts.
    if (!EntryId.safeParse(hit.id).success) {
      throw new Error(`${this.where} answered the search with an entry id that is not a number`);
    }
    return String(hit.id);
  }

  async post(entry: LogbookEntry, signal?: AbortSignal): Promise<PostedEntry> {
    if (!this.#o.authorization) {
      throw new Error(
        `${this.where} takes entries only with credentials: set [epics] username_env and ` +
          "password_env to the environment variables that hold them",
      );
    }
    const log = {
      title: entry.title,
      description: entry.body,
      level: entry.level,
      logbooks: entry.logbooks.map((name) => ({ name })),
      tags: entry.tags.map((name) => ({ name })),
      properties: [{
        name: DRAFT_PROPERTY,
        attributes: [{ name: DRAFT_ATTRIBUTE, value: entry.draftId }],
      }],
    };
    let text: string;
    if (!entry.attachments.length) {
      text = await this.#send("PUT", "/logs?markup=commonmark", JSON.stringify(log), signal);
    } else {
      const form = new FormData();
      const listed = entry.attachments.map((a) => ({
        id: crypto.randomUUID(),
        filename: a.name,
        fileMetadataDescription: a.contentType,
      }));
      form.append(
        "logEntry",
        new Blob([JSON.stringify({ ...log, attachments: listed })], { type: "application/json" }),
      );
      for (const a of entry.attachments) {
        form.append("files", new Blob([a.bytes as BlobPart], { type: a.contentType }), a.name);
      }
      text = await this.#send("PUT", "/logs/multipart?markup=commonmark", form, signal);
    }
    let created: unknown;
    try {
      created = JSON.parse(text);
    } catch {
      created = undefined;
    }
    const ok = CreatedSchema.safeParse(created);
    if (!ok.success) {
      throw new UncertainPostError(
        `${this.where} answered the post without the new entry's id; it may have taken it`,
      );
    }
    return { id: String(ok.data.id) };
  }

  /** One request; the body of a 2xx answer, or a one-line Error. */
  async #send(
    method: string,
    path: string,
    body: string | FormData | undefined,
    signal?: AbortSignal,
  ): Promise<string> {
    const o = this.#o;
    const url = `${o.base}${path}`;
    const timeout = timeoutSignal(o.timeoutMs, o.timers);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers: Record<string, string> = {
      accept: "application/json",
      "x-olog-client-info": `accel-agent ${VERSION}`,
    };
    if (typeof body === "string") headers["content-type"] = "application/json";
    if (o.authorization) headers.authorization = o.authorization;
    const sending = method !== "GET";
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body, signal: both, redirect: "manual" });
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      const sent = sending ? "; it may have taken the entry" : "";
      if (timeout.aborted) {
        const msg = `${this.where} did not answer within ${o.timeoutMs} ms${sent}`;
        throw sending ? new UncertainPostError(msg) : new Error(msg);
      }
      throw new Error(`${this.where} is unreachable (${errorMessage(e).split("\n")[0]})`);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => {});
      throw new Error(
        `${this.where} answered HTTP ${res.status} (a redirect to ${
          res.headers.get("location")?.slice(0, 200) ?? "nowhere"
        }), which is not followed; check [epics] olog_url`,
      );
    }
    if (!res.ok) {
      const said = await readErrorText(res, 4096);
      throw new Error(statusText(this.where, res.status, said, sending ? "entry" : "search"));
    }
    try {
      return await readCapped(res, {
        label: "Olog",
        base: o.base,
        timeoutMs: o.timeoutMs,
        maxBytes: o.maxBytes,
        maxBytesKey: "[epics] olog_max_bytes",
      }, url);
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      const msg = `${this.where} answered, but its reply could not be read (${errorMessage(e)})`;
      throw sending
        ? new UncertainPostError(`${msg}; it may have taken the entry`)
        : new Error(msg);
    }
  }
}

/** One line for an error status, with what to check. */
function statusText(
  where: string,
  status: number,
  body: string,
  what: "entry" | "search",
): string {
  const said = looksLikeHtml(body)
    ? " with an HTML page"
    : body.trim()
    ? `: ${body.slice(0, 200).replace(/\s+/g, " ").trim()}`
    : "";
  const fix = status === 401 || status === 403
    ? "; check the credentials in the variables [epics] username_env and password_env name"
    : status === 400 && what === "entry"
    ? "; check that [elog] logbooks and tags exist in Olog"
    : "";
  return `${where} refused the ${what} (HTTP ${status}${said})${fix}`;
}
