import { describe, expect, it } from 'vitest';
import { backgroundAllowed, readBudget, reserveOf } from './rateBudget.ts';

describe('rate budget', () => {
  it('reads the X-RateLimit headers', () => {
    const h = new Headers({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '42', 'x-ratelimit-reset': '1800000060' });
    expect(readBudget(h)).toEqual({ limit: 100, remaining: 42, resetAt: 1_800_000_060_000 });
    expect(readBudget(new Headers())).toBeNull();
  });

  it('background refreshes leave a quarter of the minute (at least 10) to the operator', () => {
    expect(reserveOf(100)).toBe(25);
    expect(reserveOf(20)).toBe(10);
    const resetAt = 1_000_000;
    expect(backgroundAllowed(0, { limit: 100, remaining: 26, resetAt })).toBe(true);
    expect(backgroundAllowed(0, { limit: 100, remaining: 25, resetAt })).toBe(false);
    expect(backgroundAllowed(resetAt, { limit: 100, remaining: 0, resetAt })).toBe(true); // a new window
    expect(backgroundAllowed(0, null)).toBe(true);
  });
});
