import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../db/postgresStore.ts';
import { freshPostgresDatabase, openTestStore } from '../../test/support/stores.ts';
import { needs } from '../../test/support/system.ts';
import { ManualClock } from '../platform/clock.ts';
import { MemoryRateLimiter, type RateLimiter } from './rateLimit.ts';
import { RateLimitRepo } from './rateLimitRepo.ts';
import { SharedRateLimiter } from './sharedRateLimit.ts';

const pgSkip = needs.postgres();

const developer = { standard_per_minute: 100, batch_per_minute: 10, burst_per_second: 20 };
const start = Date.parse('2026-11-21T12:00:00.000Z');

// The same budgets whichever implementation keeps them (the HTTP behaviour is in
// test/api/rate-limits.test.ts).
const limiters = [
  { name: 'in memory', skip: null, open: async (clock: ManualClock) => ({ limiter: new MemoryRateLimiter(clock) as RateLimiter, close: async () => {} }) },
  ...(['sqlite', 'postgres'] as const).map((dialect) => ({
    name: `shared, on ${dialect}`,
    skip: dialect === 'postgres' ? pgSkip : null,
    open: async (clock: ManualClock) => {
      const t = await openTestStore(dialect);
      return { limiter: new SharedRateLimiter(t.store.db, new RateLimitRepo(), clock) as RateLimiter, close: () => t.close() };
    },
  })),
];

for (const { name, skip, open } of limiters) {
  describe.skipIf(skip !== null)(`rate limiter ${name}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let close: () => Promise<void> = async () => {};
    afterEach(() => close());

    async function setUp() {
      const clock = new ManualClock(start);
      const opened = await open(clock);
      close = opened.close;
      return { clock, limiter: opened.limiter };
    }

    it('counts down the minute, refuses the 21st request of a second, and charges nothing for it', async () => {
      const { clock, limiter } = await setUp();
      const reset = start / 1000 + 60;
      expect(await limiter.check('k', developer, 'standard')).toEqual({ allowed: true, limit: 100, remaining: 99, reset, retryAfter: 0 });
      for (let i = 0; i < 19; i++) expect((await limiter.check('k', developer, 'standard')).allowed).toBe(true);
      for (let i = 0; i < 5; i++) {
        expect(await limiter.check('k', developer, 'standard')).toEqual({ allowed: false, limit: 100, remaining: 80, reset, retryAfter: 1 });
      }
      clock.advance(1000);
      expect(await limiter.check('k', developer, 'standard')).toMatchObject({ allowed: true, remaining: 79 });
    });

    it('refuses the 101st request of a minute until the next one, with Retry-After up to its end', async () => {
      const { clock, limiter } = await setUp();
      for (let s = 0; s < 5; s++) {
        for (let i = 0; i < 20; i++) expect((await limiter.check('k', developer, 'standard')).allowed).toBe(true);
        clock.advance(1000);
      }
      clock.advance(10_500);
      expect(await limiter.check('k', developer, 'standard')).toEqual({ allowed: false, limit: 100, remaining: 0, reset: start / 1000 + 60, retryAfter: 45 });
      clock.set(start + 60_000);
      expect(await limiter.check('k', developer, 'standard')).toMatchObject({ allowed: true, remaining: 99, reset: start / 1000 + 120 });
    });

    it('keeps the batch budget apart from the standard one, and per key', async () => {
      const { limiter } = await setUp();
      for (let i = 0; i < 10; i++) expect(await limiter.check('k', developer, 'batch')).toMatchObject({ allowed: true, limit: 10, remaining: 9 - i });
      expect(await limiter.check('k', developer, 'batch')).toMatchObject({ allowed: false, remaining: 0, retryAfter: 60 });
      expect(await limiter.check('k', developer, 'standard')).toMatchObject({ allowed: true, remaining: 99 });
      expect(await limiter.check('other', developer, 'batch')).toMatchObject({ allowed: true, remaining: 9 });
    });
  });
}

describe.skipIf(pgSkip !== null)(`rate limiter shared by processes on postgres${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  const stores: PostgresStore[] = [];
  let drop: () => Promise<void> = async () => {};
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await drop();
  });

  it('lets exactly the budget through when three connection pools charge one key at once', async () => {
    const database = await freshPostgresDatabase();
    drop = database.drop;
    for (let i = 0; i < 3; i++) stores.push(await PostgresStore.open(database.url, { poolSize: 4 }));
    const clock = new ManualClock(start + 5_000);
    const limiters = stores.map((s) => new SharedRateLimiter(s.db, new RateLimitRepo(), clock));
    const limits = { standard_per_minute: 100, batch_per_minute: 10, burst_per_second: 1000 };
    const decisions = await Promise.all(Array.from({ length: 150 }, (_, i) => limiters[i % 3]!.check('k', limits, 'standard')));
    const allowed = decisions.filter((d) => d.allowed);
    expect(allowed).toHaveLength(100);
    // Every allowed request saw its own count: the remaining values are 99 … 0, each once.
    expect(allowed.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0 && d.retryAfter === 55)).toBe(true);
  });
});
