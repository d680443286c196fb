/**
 * A control system that records every write and can be told to fail: wraps
 * any real one (usually the simulator).
 *
 * @module
 */
import type { ControlSystem, Reading, Value } from "../../src/adapters/adapter.ts";

export interface SpyFaults {
  /** The Nth write (1-based) throws. */
  failOnWrite?: number;
  /** Writes to this device are accepted but never take effect (its readback stays put). */
  stuck?: string;
  /** Reads of this device fail (a disconnected PV). */
  unreadable?: string;
  /** Called after every successful write, with its 1-based count. */
  afterWrite?(count: number, device: string, value: Value): void;
}

export class SpyControlSystem implements ControlSystem {
  readonly kind: string;
  readonly writes: { device: string; value: Value }[] = [];
  attempts = 0;

  constructor(readonly inner: ControlSystem, public faults: SpyFaults = {}) {
    this.kind = `spy(${inner.kind})`;
  }

  async read(names: string[], signal?: AbortSignal): Promise<Reading[]> {
    const readings = await this.inner.read(names, signal);
    const gone = this.faults.unreadable;
    return gone === undefined ? readings : readings.map((r) =>
      r.device === gone
        ? {
          ...r,
          ok: false,
          value: null,
          severity: "INVALID",
          status: "DISCONNECTED",
          error: "disconnected",
        }
        : r
    );
  }

  async write(name: string, value: Value, signal?: AbortSignal): Promise<void> {
    // The runtime side of the only-the-executor-writes rule, checked on every write in tests.
    if (!/\/src\/plan\/executor(\.ts|\/)/.test(new Error().stack ?? "")) {
      throw new Error(`write to ${name} from outside src/plan/executor.ts and src/plan/executor/`);
    }
    this.attempts++;
    if (this.faults.failOnWrite === this.attempts) {
      throw new Error(
        `gateway refused the write to ${name} (injected fault on write ${this.attempts})`,
      );
    }
    if (this.faults.stuck !== name) await this.inner.write(name, value, signal);
    this.writes.push({ device: name, value });
    this.faults.afterWrite?.(this.writes.length, name, value);
  }

  describe: ControlSystem["describe"] = (n, s) => this.inner.describe(n, s);
  search: ControlSystem["search"] = (q, s) => this.inner.search(q, s);
  logs: ControlSystem["logs"] = (q, s) => this.inner.logs(q, s);
  archive: ControlSystem["archive"] = (q, s) => this.inner.archive(q, s);
  close = () => this.inner.close();
}
