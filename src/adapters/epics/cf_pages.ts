/**
 * ChannelFinder read page after page the same way everywhere (the index's
 * walk over the namespace and a search's page at any offset): pages of
 * `~size` channels sorted by name, continued with the `~search_after` cursor
 * (Elasticsearch refuses `~from` + `~size` past its window, 10,000 by
 * default, spec §e.2); a server that ignores it is read through
 * `/scroll/<last name>` (the same cursor), and one without `/scroll` with
 * `~from`, which works only inside the window.
 *
 * @module
 */
import type { z } from "zod";
import { httpRead, type HttpService, HttpStatusError, httpText, query } from "../http.ts";
import { jsonListPage, jsonReply, pageBody, shaped } from "../reply.ts";
import { ChannelsSchema, ScrollSchema } from "./shapes.ts";

/** One channel as ChannelFinder sends it. */
export type Channel = z.infer<typeof ChannelsSchema>[number];

/** The most channels one page asks for (ChannelFinder's own default `~size`). */
export const MAX_PAGE = 10_000;

/** Query parameters of a channel search (`~name`, `~tag`, properties); paging is added here. */
export type ChannelFilters = Record<string, string | string[] | undefined>;

/**
 * How the next page is asked for: the `~search_after` cursor, else `/scroll/<last
 * name>` (the same cursor on servers that have it only there), else `~from`.
 */
type Cursor = "search_after" | "scroll" | "from";
const NEXT: Record<Cursor, Cursor | undefined> = {
  search_after: "scroll",
  scroll: "from",
  from: undefined,
};

/** What a page walk reports besides its channels. */
export interface PageWalk {
  /** A server sent more channels than a page asked for (it ignored `~size`). */
  oversized: boolean;
}

/**
 * The channels matching `filters`, page by page in name order, each page at
 * most `pageSize` channels (and read no further). Stops when a page comes
 * back short. Throws when the server can be read page by page in no way.
 */
export async function* channelPages(
  svc: HttpService,
  filters: ChannelFilters,
  pageSize: number,
  signal?: AbortSignal,
  walk: PageWalk = { oversized: false },
): AsyncGenerator<Channel[]> {
  const size = Math.max(1, Math.min(MAX_PAGE, Math.floor(pageSize)));
  let cursor: Cursor = "search_after";
  let seen = 0;
  let last: string | undefined;
  for (;;) {
    signal?.throwIfAborted();
    const channels = await fetchPage(svc, filters, size, cursor, last, seen, walk, signal);
    if (channels === undefined) {
      // No /scroll on this server: page with ~from.
      cursor = "from";
      continue;
    }
    const first = channels[0]?.name;
    if (last !== undefined && first !== undefined && first <= last) {
      // The page starts at or before the last one's end: the cursor was ignored.
      const next: Cursor | undefined = NEXT[cursor];
      if (next === undefined) {
        throw new Error(
          `${svc.label} at ${svc.base} ignores ~search_after, /scroll and ~from (page ${seen} ` +
            `started again at ${first}); it cannot be read page by page`,
        );
      }
      cursor = next;
      continue;
    }
    seen += channels.length;
    if (channels.length > 0) yield channels;
    if (channels.length < size) return;
    last = channels[channels.length - 1]?.name;
  }
}

/** One page after `last`; undefined when the server has no `/scroll`. */
async function fetchPage(
  svc: HttpService,
  filters: ChannelFilters,
  size: number,
  cursor: Cursor,
  last: string | undefined,
  seen: number,
  walk: PageWalk,
  signal: AbortSignal | undefined,
): Promise<Channel[] | undefined> {
  const params: ChannelFilters = { ...filters, "~size": String(size) };
  try {
    if (cursor === "scroll" && last !== undefined) {
      // The scroll id is the last hit's id, which ChannelFinder makes the channel's name.
      const { text, status } = await httpText(
        svc,
        `/scroll/${encodeURIComponent(last)}${query(params)}`,
        { signal },
      );
      const reply = shaped(
        svc,
        ScrollSchema,
        jsonReply(svc, text, status),
        "a scroll page ({id, channels})",
      );
      return (reply.channels ?? []).slice(0, size);
    }
    if (last !== undefined && cursor === "search_after") params["~search_after"] = last;
    if (last !== undefined && cursor === "from") params["~from"] = String(seen);
    const { body } = await httpRead(
      svc,
      `/channels${query(params)}`,
      { signal },
      jsonListPage(svc, size),
    );
    if (body.more) walk.oversized = true;
    return shaped(svc, ChannelsSchema, pageBody(body), "a list of channels with names");
  } catch (e) {
    if (e instanceof HttpStatusError && cursor === "scroll" && [404, 405].includes(e.status)) {
      return undefined;
    }
    if (e instanceof HttpStatusError && e.status === 400 && cursor === "from") {
      throw new Error(
        `${svc.label} at ${svc.base} refused the page from channel ${seen} (HTTP 400): ` +
          `it ignores ~search_after, has no /scroll, and its Elasticsearch window ends there; ` +
          `upgrade ChannelFinder or raise its index.max_result_window`,
      );
    }
    throw e;
  }
}
