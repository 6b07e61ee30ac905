import { describe, expect, it } from 'vitest';
import { intervalsFor, isAnalyticsRange, rangeQuery } from './analyticsRange.ts';

describe('analytics periods', () => {
  const now = new Date('2026-11-26T15:00:00.000Z');

  it('ends the period now and starts it the range’s days before', () => {
    expect(rangeQuery('7d', now)).toEqual({ from: '2026-11-19T15:00:00.000Z', to: '2026-11-26T15:00:00.000Z', interval: 'day' });
    expect(rangeQuery('24h', now)).toEqual({ from: '2026-11-25T15:00:00.000Z', to: '2026-11-26T15:00:00.000Z', interval: 'hour' });
  });

  it('keeps a bucket size the range allows and falls back to the range’s default otherwise', () => {
    expect(rangeQuery('30d', now, 'week').interval).toBe('week');
    expect(rangeQuery('90d', now, 'day').interval).toBe('day');
    expect(rangeQuery('90d', now, 'hour').interval).toBe('week'); // 2,160 hourly bars would be unreadable
    expect(rangeQuery('24h', now, 'week').interval).toBe('hour');
    expect(intervalsFor('7d')).toEqual(['day', 'hour']);
  });

  it('recognises only the offered ranges in a URL', () => {
    expect(isAnalyticsRange('30d')).toBe(true);
    expect(isAnalyticsRange('365d')).toBe(false);
    expect(isAnalyticsRange('toString')).toBe(false);
    expect(isAnalyticsRange(null)).toBe(false);
  });
});
