import { describe, expect, it } from 'vitest';
import { loadFoldShare } from './analytics.ts';

describe('the background fold\'s share of each second under load', () => {
  it('is a quarter at the backlog limit and grows with the backlog, up to three quarters', () => {
    expect(loadFoldShare(10_000, 10_000)).toBe(0.25);
    expect(loadFoldShare(15_000, 10_000)).toBe(0.375);
    expect(loadFoldShare(20_000, 10_000)).toBe(0.5);
    expect(loadFoldShare(30_000, 10_000)).toBe(0.75);
    expect(loadFoldShare(1_000_000, 10_000)).toBe(0.75);
    // Below the limit the fold does not run under load; the share never drops below a quarter.
    expect(loadFoldShare(0, 10_000)).toBe(0.25);
  });
});
