/**
 * The EPICS web services' replies (spec §a, §d–§g), as zod schemas of the
 * fields the adapters use. Checked at the boundary with `shaped()`, so a
 * service that answers something else is reported as such ("ChannelFinder at
 * URL answered an object, expected a list of channels"), never as a TypeError.
 * Fields are optional where real services leave them out, and nullable where
 * they send null; only a field of the wrong type is an error.
 *
 * @module
 */
import { z } from "zod";

/** Optional text that some services send as null. */
const optText = z.string().nullish();
/** A scalar some services send as a string, others as a number. */
const scalar = z.union([z.string(), z.number(), z.boolean()]).nullish();

/** ChannelFinder `GET /channels`: a list of channels with properties and tags. */
export const ChannelsSchema = z.array(z.object({
  name: z.string(),
  properties: z.array(z.object({ name: z.string(), value: scalar })).nullish(),
  tags: z.array(z.object({ name: z.string() })).nullish(),
}));

/** ChannelFinder `GET /scroll[/<id>]`: the next page and the id to continue from. */
export const ScrollSchema = z.object({
  id: z.string().nullish(),
  channels: ChannelsSchema.nullish(),
});

/** ChannelFinder `GET /channels/count`: a bare integer. */
export const CountSchema = z.number().int().nonnegative();

const OlogEntrySchema = z.object({
  id: z.union([z.string(), z.number()]).nullish(),
  owner: optText,
  title: optText,
  description: optText,
  level: optText,
  createdDate: z.number(),
  logbooks: z.array(z.object({ name: z.string().nullish() })).nullish(),
  properties: z.array(z.object({
    attributes: z.array(z.object({ name: scalar, value: scalar })).nullish(),
  })).nullish(),
});
export type OlogEntry = z.infer<typeof OlogEntrySchema>;

/** Olog `GET /logs/search`: `{logs, hitCount}` (newer) or a bare list (older). */
export const OlogSearchSchema = z.union([
  z.array(OlogEntrySchema),
  z.object({ logs: z.array(OlogEntrySchema).nullish() }),
]);

/** Alarm logger `GET /search/alarm`: a list of alarm messages. */
export const AlarmMessagesSchema = z.array(z.object({
  severity: optText,
  message: optText,
  value: scalar,
  time: optText,
  message_time: optText,
  current_severity: optText,
  current_message: optText,
  config: optText,
  pv: optText,
  user: optText,
  host: optText,
  command: optText,
}));
export type AlarmMessage = z.infer<typeof AlarmMessagesSchema>[number];

/** One archiver sample; `val` is a number, a string, a waveform or null (a bare NaN). */
const ArchiverEventSchema = z.object({
  secs: z.number(),
  nanos: z.number().nullish(),
  val: z.union([z.number(), z.string(), z.array(z.unknown()), z.null()]),
  severity: z.number().nullish(),
});
export type ArchiverEvent = z.infer<typeof ArchiverEventSchema>;

/** Archiver `getData.json`: a list of `{meta, data}`, one per PV (empty when none). */
export const GetDataSchema = z.array(z.object({
  meta: z.record(z.string(), z.unknown()).nullish(),
  data: z.array(ArchiverEventSchema).nullish(),
}));

/** Archiver `getMatchingPVs`: a list of PV names. */
export const MatchingPvsSchema = z.array(z.string());
