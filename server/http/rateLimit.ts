import type { Clock } from '../platform/clock.ts';
import type { Limits } from './auth.ts';

export type Budget = 'standard' | 'batch';

export interface RateDecision {
  allowed: boolean;
  /** The per-minute budget of the route, for X-RateLimit-* headers. */
  limit: number;
  remaining: number;
  /** Unix seconds at which the minute window resets. */
  reset: number;
  retryAfter: number;
}

/**
 * Fixed-window budgets per API key: standard requests per minute plus a per-second burst cap,
 * and a separate per-minute batch budget. A request is checked against every budget it belongs
 * to before any is charged, so a rejected request consumes nothing.
 *
 * Not express-rate-limit: its stores keep their own wall-clock timers (this takes the app's
 * injected clock, so windows are testable), and it charges each limiter before the next one
 * decides, which would let a burst rejection eat the minute budget.
 *
 * Two implementations: MemoryRateLimiter for the one process on a SQLite file, and
 * SharedRateLimiter (sharedRateLimit.ts) on PostgreSQL, where any number of processes answer
 * for the same keys.
 */
export interface RateLimiter {
  check(keyId: string, limits: Limits, budget: Budget): Promise<RateDecision>;
}

/** The window a request falls in, and what its headers say about it. */
export function rateWindow(now: number): { minute: number; second: number; reset: number; minuteRetry: number } {
  const minute = Math.floor(now / 60_000);
  return {
    minute,
    second: Math.floor(now / 1000),
    reset: (minute + 1) * 60,
    minuteRetry: Math.max(1, Math.ceil(((minute + 1) * 60_000 - now) / 1000)),
  };
}

interface KeyWindows {
  minute: number;
  standard: number;
  batch: number;
  second: number;
  burst: number;
}

/** The budgets of one process, in memory. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, KeyWindows>();

  private readonly clock: Clock;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  async check(keyId: string, limits: Limits, budget: Budget): Promise<RateDecision> {
    const { minute, second, reset, minuteRetry } = rateWindow(this.clock.now());
    let w = this.windows.get(keyId);
    if (!w || w.minute !== minute) {
      w = { minute, standard: 0, batch: 0, second, burst: 0 };
      this.windows.set(keyId, w);
      if (this.windows.size > 10_000) this.evict(minute);
    }
    if (w.second !== second) {
      w.second = second;
      w.burst = 0;
    }

    if (budget === 'batch') {
      const limit = limits.batch_per_minute;
      if (w.batch >= limit) return { allowed: false, limit, remaining: 0, reset, retryAfter: minuteRetry };
      w.batch++;
      return { allowed: true, limit, remaining: limit - w.batch, reset, retryAfter: 0 };
    }
    const limit = limits.standard_per_minute;
    if (w.standard >= limit) return { allowed: false, limit, remaining: 0, reset, retryAfter: minuteRetry };
    if (w.burst >= limits.burst_per_second) {
      return { allowed: false, limit, remaining: limit - w.standard, reset, retryAfter: 1 };
    }
    w.standard++;
    w.burst++;
    return { allowed: true, limit, remaining: limit - w.standard, reset, retryAfter: 0 };
  }

  private evict(minute: number): void {
    for (const [key, w] of this.windows) if (w.minute !== minute) this.windows.delete(key);
  }
}
