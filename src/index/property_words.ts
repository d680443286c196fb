/**
 * How the index builder reads a device's properties: which keys are not
 * words about the device, which values are numbers, which record types hold
 * a state.
 *
 * @module
 */

/**
 * Properties that say nothing about what a device is (where its IOC runs,
 * when it was seen): kept as raw `p:` terms for filters, not read as words.
 */
export const NOT_WORDS = new Set([
  "hostname",
  "iocname",
  "iocid",
  "iocip",
  "recceiverid",
  "time",
  "pvstatus",
  "owner",
  "alias",
  "recordtype",
  "id",
  "uid",
  "port",
  "pvname",
  "device",
  "index",
]);

/** A property value that is a number and nothing else. */
export const NUMERIC = /^[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?$/;

/** EPICS record types that hold a state (a binary or multi-bit input). */
export const STATE_RECORDS = new Set(["bi", "mbbi", "mbbidirect"]);
