/**
 * What the device index knows of one device, whatever backend it came from,
 * and how a backend hands its namespace to the index.
 *
 * @module
 */

/**
 * One device as the index holds it. `properties` are ChannelFinder-style
 * facts (section/subsystem, cell, family, index, plane, signal, kind
 * setpoint/readback/status, units…); `tags` are bare labels.
 */
export interface IndexRecord {
  name: string;
  description: string;
  units: string;
  writable: boolean;
  properties: Record<string, string>;
  tags: string[];
}

/**
 * A backend's whole namespace, streamed in pages so that a 10^6-name
 * facility is never held twice while the index is built.
 */
export interface IndexSource {
  /** Stable identity of the namespace (backend kind and address), the on-disk cache key. */
  readonly id: string;
  /** Every record, page by page. Stops (throws an AbortError) when `signal` aborts. */
  records(signal?: AbortSignal): AsyncIterable<IndexRecord[]>;
}
