import type { Executor } from '../db/store.ts';
import type { Limits } from './auth.ts';
import type { Clock } from '../platform/clock.ts';
import { type Budget, type RateDecision, type RateLimiter, rateWindow } from './rateLimit.ts';
import type { RateLimitRepo } from './rateLimitRepo.ts';

/**
 * The budgets of rateLimit.ts held in the database, so that every process answering for a key
 * charges the same windows: the 101st standard request of a minute is refused whichever process
 * receives it, and the X-RateLimit-* headers count every process's requests. One upsert per
 * request (RateLimitRepo); a refusal reads the window once more to say which budget refused.
 * Windows are by each process's clock: processes must keep their clocks in sync (NTP).
 */
export class SharedRateLimiter implements RateLimiter {
  private readonly db: Executor;
  private readonly repo: RateLimitRepo;
  private readonly clock: Clock;
  /** The minute whose predecessors this process last deleted. */
  private prunedMinute = -Infinity;

  constructor(db: Executor, repo: RateLimitRepo, clock: Clock) {
    this.db = db;
    this.repo = repo;
    this.clock = clock;
  }

  async check(keyId: string, limits: Limits, budget: Budget): Promise<RateDecision> {
    const { minute, second, reset, minuteRetry } = rateWindow(this.clock.now());
    this.prune(minute);
    if (budget === 'batch') {
      const limit = limits.batch_per_minute;
      const charged = await this.repo.chargeBatch(this.db, keyId, minute, limit);
      if (!charged) return { allowed: false, limit, remaining: 0, reset, retryAfter: minuteRetry };
      return { allowed: true, limit, remaining: Math.max(0, limit - charged.batch), reset, retryAfter: 0 };
    }
    const limit = limits.standard_per_minute;
    const charged = await this.repo.chargeStandard(this.db, keyId, { minute, second }, { perMinute: limit, perSecond: limits.burst_per_second });
    if (charged) return { allowed: true, limit, remaining: Math.max(0, limit - charged.standard), reset, retryAfter: 0 };
    const counts = await this.repo.counts(this.db, keyId, minute);
    const used = counts?.standard ?? limit;
    if (used >= limit) return { allowed: false, limit, remaining: 0, reset, retryAfter: minuteRetry };
    return { allowed: false, limit, remaining: limit - used, reset, retryAfter: 1 };
  }

  /** Once a minute per process, drops windows no request can charge any more. */
  private prune(minute: number): void {
    if (minute <= this.prunedMinute) return;
    this.prunedMinute = minute;
    // Not awaited: a failure only leaves old rows for the next minute's attempt.
    this.repo.deleteBefore(this.db, minute - 1).catch(() => {});
  }
}
