import { describe, expect, it } from 'vitest';
import { percentOf, sourceRows } from './summary.ts';

describe('organization analytics figures', () => {
  it('lists every scan source in a fixed order, zero where there were none', () => {
    expect(sourceRows([{ value: 'nfc_unverified', scans: 2 }, { value: 'qr', scans: 5 }])).toEqual([
      { value: 'qr', scans: 5 },
      { value: 'nfc_verified', scans: 0 },
      { value: 'nfc_unverified', scans: 2 },
    ]);
    expect(sourceRows([]).map((r) => r.scans)).toEqual([0, 0, 0]);
  });

  it('keeps a source it does not know after the known ones', () => {
    expect(sourceRows([{ value: 'bluetooth', scans: 1 }, { value: 'qr', scans: 1 }]).map((r) => r.value)).toEqual(['qr', 'nfc_verified', 'nfc_unverified', 'bluetooth']);
  });

  it('gives shares as whole percentages, never 0% for a scan that happened', () => {
    expect(percentOf(1, 3)).toBe('33%');
    expect(percentOf(2, 3)).toBe('67%');
    expect(percentOf(3, 3)).toBe('100%');
    expect(percentOf(1, 1000)).toBe('<1%');
    expect(percentOf(0, 10)).toBe('0%');
    expect(percentOf(0, 0)).toBe('—');
  });
});
