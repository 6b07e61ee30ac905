import type { Clock } from '../platform/clock.ts';
import { isDiskFull } from './errors.ts';

export interface StorageLogger {
  info(message: string): void;
  error(message: string, err?: unknown): void;
}

/** While writes fail, one line with a count at most this often (instead of one per failure). */
const REPORT_EVERY_MS = 60_000;

export type StorageStatus = { ok: true } | { ok: false; reason: string };

/**
 * Whether the data volume takes writes. Every disk-full failure (an API write, a scan, a worker)
 * is reported here instead of being logged with its stack: the first one logs a line, later ones
 * are counted and summed up in one line a minute, and the first write that works again logs the
 * total. /healthz reads status(). Other errors pass through untouched.
 */
export class StorageHealth {
  private failures = 0;
  private unreported = 0;
  private since: number | null = null;
  private lastReport = 0;
  private readonly logger: StorageLogger;
  private readonly clock: Clock;

  constructor(logger: StorageLogger, clock: Clock) {
    this.logger = logger;
    this.clock = clock;
  }

  /** Counts `err` when it is a disk-full error (then true: the caller logs nothing more). */
  failed(err: unknown, where: string): boolean {
    if (!isDiskFull(err)) return false;
    const now = this.clock.now();
    this.failures++;
    if (this.since === null) {
      this.since = now;
      this.lastReport = now;
      this.logger.error(`storage: writes failing: the data volume is full (${where}); one line a minute until they work again`);
    } else if (now - this.lastReport >= REPORT_EVERY_MS) {
      this.logger.error(`storage: ${this.unreported + 1} more writes failed in the last ${Math.round((now - this.lastReport) / 1000)} s: the data volume is still full`);
      this.unreported = 0;
      this.lastReport = now;
    } else {
      this.unreported++;
    }
    return true;
  }

  /** A write went through: if writes were failing, say so once with the total. */
  succeeded(): void {
    if (this.since === null) return;
    this.logger.info(`storage: writes work again after ${this.failures} failed writes (the data volume was full since ${new Date(this.since).toISOString()})`);
    this.failures = 0;
    this.unreported = 0;
    this.since = null;
  }

  status(): StorageStatus {
    if (this.since === null) return { ok: true };
    return { ok: false, reason: `writes failing: the data volume is full (${this.failures} failed writes since ${new Date(this.since).toISOString()})` };
  }

  /** `logger` with disk-full errors counted here instead of logged one by one. */
  wrap(logger: StorageLogger): StorageLogger {
    return { ...logger, error: (message: string, err?: unknown) => (this.failed(err, message) ? undefined : logger.error(message, err)) };
  }
}
