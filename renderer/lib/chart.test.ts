import { describe, expect, it } from 'vitest';
import { bucketLabel, labelledBuckets, niceTicks, rangeLabel } from './chart.ts';

describe('scans chart axes', () => {
  it('gridlines at round values covering the highest bar', () => {
    expect(niceTicks(0)).toEqual([0, 1]);
    expect(niceTicks(1)).toEqual([0, 1]);
    expect(niceTicks(3)).toEqual([0, 1, 2, 3]);
    expect(niceTicks(7)).toEqual([0, 2, 4, 6, 8]);
    expect(niceTicks(40)).toEqual([0, 10, 20, 30, 40]);
    expect(niceTicks(1234)).toEqual([0, 500, 1000, 1500]);
  });

  it('labels every k-th bucket, at most the given number', () => {
    expect([...labelledBuckets(7, 8)]).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect([...labelledBuckets(24, 6)]).toEqual([0, 4, 8, 12, 16, 20]);
    expect(labelledBuckets(31, 6).size).toBeLessThanOrEqual(6);
  });

  it('names buckets in UTC', () => {
    expect(bucketLabel('2026-11-24T14:00:00.000Z', 'hour')).toBe('14:00');
    expect(bucketLabel('2026-11-24T00:00:00.000Z', 'day')).toBe('24 Nov');
    expect(rangeLabel('2026-11-18T00:00:00.000Z', '2026-11-25T00:00:00.000Z', 'day')).toBe('18 Nov 2026 – 25 Nov 2026');
    expect(rangeLabel('2026-11-24T14:00:00.000Z', '2026-11-25T13:00:00.000Z', 'hour')).toBe('24 Nov, 14:00 – 25 Nov, 13:00');
  });
});
