/**
 * Where facilities keep a channel's description and units among its
 * ChannelFinder properties: recsync's `recordDesc` and an IOC's `EGU` info
 * tag, or a facility's own `description`, `desc`, `units`.
 *
 * @module
 */

/** Properties a facility keeps a channel's description in, the most common first. */
export const DESCRIPTION_KEYS = ["recordDesc", "description", "desc", "DESC", "Description"];

/** Properties a facility keeps a channel's units in. */
export const UNITS_KEYS = ["EGU", "egu", "units", "unit", "Units"];
