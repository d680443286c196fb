/**
 * A fake Phoebus Olog (spec §f) that records what it receives: searches
 * (`GET /logs/search`, `/logs` with time, text and `properties` filters),
 * one entry (`GET /logs/{id}`), logbooks and tags, and the two ways to
 * create an entry — `PUT /logs` (JSON) and `PUT /logs/multipart` (parts
 * `logEntry` and `files`, as many files as the entry lists attachments).
 * As the real service: writes need Basic credentials, the title and at
 * least one logbook are required, logbooks and tags must exist (else 400),
 * the owner is the authenticated user, ids and `createdDate` are the
 * server's. A created entry is searchable at once (Olog saves with a
 * refresh).
 *
 * @module
 */
import { globRe } from "./fake_http.ts";

/** One write request as the fake received it. */
export interface ReceivedPost {
  path: string;
  authorization: string | null;
  contentType: string | null;
  /** The entry sent (the JSON body, or the multipart `logEntry`). */
  entry: Record<string, unknown>;
  files: { name: string; type: string; bytes: number; text: string }[];
  /** The id given to it, when it was created. */
  createdId?: number;
}

export interface OlogFaults {
  /** Create the entry, then break the reply off (the client never learns the id). */
  loseReplies: number;
  /** Answer writes with a redirect to this URL instead. */
  redirectTo?: string;
  /** Create the entry, then hold the reply until this settles (a process killed meanwhile). */
  hold?: Promise<unknown>;
}

export class FakeOlog {
  readonly received: ReceivedPost[] = [];
  readonly faults: OlogFaults = { loseReplies: 0 };
  readonly logbooks = ["Operations", "Controls"];
  readonly tags = ["Fault", "Beam"];
  readonly user = "olog-user";
  readonly password = "olog-secret";

  constructor(readonly entries: Record<string, unknown>[], readonly now: () => number = Date.now) {}

  /** The entries created through the fake (not those it started with). */
  get created(): Record<string, unknown>[] {
    const ids = new Set(this.received.map((r) => r.createdId).filter((x) => x !== undefined));
    return this.entries.filter((e) => ids.has(e.id as number));
  }

  async handle(url: URL, req: Request): Promise<Response> {
    const path = url.pathname;
    if (req.method === "PUT" && (path === "/Olog/logs" || path === "/Olog/logs/multipart")) {
      return await this.#create(url, req);
    }
    if (req.method !== "GET") return new Response("Method Not Allowed", { status: 405 });
    if (path === "/Olog/logbooks") return Response.json(this.logbooks.map((name) => ({ name })));
    if (path === "/Olog/tags") return Response.json(this.tags.map((name) => ({ name })));
    const one = /^\/Olog\/logs\/(\d+)$/.exec(path);
    if (one) {
      const e = this.entries.find((x) => String(x.id) === one[1]);
      return e ? Response.json(e) : new Response("Not Found", { status: 404 });
    }
    if (path === "/Olog/logs/search" || path === "/Olog/logs") return this.#search(url);
    return new Response("Not Found", { status: 404 });
  }

  #search(url: URL): Response {
    const p = url.searchParams;
    const start = serviceTimeMs(p.get("start")) ?? 0;
    const end = serviceTimeMs(p.get("end")) ?? Infinity;
    const terms = p.getAll("text").map((t) => globRe(`*${t}*`));
    const props = p.getAll("properties").flatMap((v) => v.split(/[|,;]/)).map(propertyMatcher);
    const size = Math.min(1000, Number(p.get("size") ?? p.get("limit") ?? 100));
    const from = Number(p.get("from") ?? 0);
    const hits = this.entries.filter((e) => {
      const t = e.createdDate as number;
      const desc = String(e.description);
      return t >= start && t <= end && terms.every((r) => r.test(desc)) &&
        (!props.length || props.some((m) => m(e)));
    }).sort((a, b) =>
      (p.get("sort") === "up" ? 1 : -1) * ((a.createdDate as number) - (b.createdDate as number))
    );
    const logs = hits.slice(from, from + size);
    return url.pathname.endsWith("/search")
      ? Response.json({ hitCount: hits.length, logs })
      : Response.json(logs);
  }

  async #create(url: URL, req: Request): Promise<Response> {
    const got: ReceivedPost = {
      path: `${url.pathname}${url.search}`,
      authorization: req.headers.get("authorization"),
      contentType: req.headers.get("content-type"),
      entry: {},
      files: [],
    };
    this.received.push(got);
    if (this.faults.redirectTo) {
      return new Response(null, { status: 307, headers: { location: this.faults.redirectTo } });
    }
    if (got.authorization !== `Basic ${btoa(`${this.user}:${this.password}`)}`) {
      return new Response("Unauthorized", { status: 401 });
    }
    try {
      if (url.pathname.endsWith("/multipart")) {
        const form = await req.formData();
        got.entry = JSON.parse(await (form.get("logEntry") as Blob).text());
        for (const f of form.getAll("files")) {
          const file = f as File;
          got.files.push({
            name: file.name,
            type: file.type,
            bytes: file.size,
            text: await file.text(),
          });
        }
        const listed = (got.entry.attachments as unknown[] | undefined) ?? [];
        if (got.files.length !== listed.length) {
          return bad("Attachment data invalid: file count does not match attachment count");
        }
      } else {
        got.entry = await req.json();
      }
    } catch {
      return bad("Malformed request");
    }
    const e = got.entry;
    const logbooks = (e.logbooks as { name?: string }[] | undefined) ?? [];
    if (!logbooks.length) return bad("A log entry must specify at least one logbook");
    if (!e.title) return bad("A log entry must specify a title");
    if (!logbooks.every((l) => this.logbooks.includes(String(l.name)))) {
      return bad("One or more invalid logbook name(s)");
    }
    const tags = (e.tags as { name?: string }[] | undefined) ?? [];
    if (!tags.every((t) => this.tags.includes(String(t.name)))) {
      return bad("One or more invalid tag name(s)");
    }
    const id = Math.max(0, ...this.entries.map((x) => Number(x.id) || 0)) + 1;
    const created = {
      id,
      owner: this.user,
      source: e.description,
      description: e.description,
      title: e.title,
      level: e.level ?? "Info",
      state: "Active",
      createdDate: this.now(),
      logbooks: logbooks.map((l) => ({ name: l.name, owner: "olog-logs", state: "Active" })),
      tags: tags.map((t) => ({ name: t.name, state: "Active" })),
      properties: e.properties ?? [],
      attachments: got.files.map((f, i) => ({
        id: ((e.attachments as { id?: string }[] | undefined)?.[i]?.id) ?? crypto.randomUUID(),
        filename: f.name,
        fileMetadataDescription: f.type,
      })),
      events: [],
    };
    this.entries.push(created);
    got.createdId = id;
    if (this.faults.hold) await this.faults.hold.catch(() => {});
    if (this.faults.loseReplies > 0) {
      this.faults.loseReplies--;
      return brokenReply();
    }
    return Response.json(created);
  }
}

function bad(message: string): Response {
  return Response.json({ status: 400, error: "Bad Request", message }, { status: 400 });
}

/** A 200 whose body breaks off before any byte: the client cannot read it. */
function brokenReply(): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.error(new Error("connection reset"));
    },
  });
  return new Response(body, { headers: { "content-type": "application/json" } });
}

/** `Name.attr.value` (each part optional, wildcards) as Olog's property search reads it. */
function propertyMatcher(pattern: string): (e: Record<string, unknown>) => boolean {
  const [name, attr, value] = [...pattern.split("."), "", "", ""];
  const re = (s: string | undefined) => (s ? globRe(s.trim()) : undefined);
  const [n, a, v] = [re(name), re(attr), re(value)];
  return (e) =>
    ((e.properties as { name?: string; attributes?: { name?: string; value?: string }[] }[]) ??
      []).some((p) =>
        (!n || n.test(String(p.name))) &&
        (!a || (p.attributes ?? []).some((x) => a.test(String(x.name)))) &&
        (!v || (p.attributes ?? []).some((x) => v.test(String(x.value))))
      );
}

/** `2021-01-20 12:00:00.123` in the given zone (UTC only here). */
function serviceTimeMs(text: string | null): number | undefined {
  if (!text) return undefined;
  const ms = Date.parse(`${text.replace(" ", "T")}Z`);
  return Number.isFinite(ms) ? ms : undefined;
}
