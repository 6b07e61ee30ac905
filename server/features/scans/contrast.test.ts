import { describe, expect, it } from 'vitest';
import { contrastRatio, readableOn, textOn } from './contrast.ts';

describe('accent contrast', () => {
  it('keeps a readable accent, lightens it on dark cards and darkens it on light ones', () => {
    expect(readableOn('#0b57d0', ['#ffffff', '#f4f5f7'])).toBe('#0b57d0');
    const dark = readableOn('#0b57d0', ['#1c1d21', '#111214']);
    expect(contrastRatio(dark, '#1c1d21')).toBeGreaterThanOrEqual(4.5);
    const yellow = readableOn('#ffcc00', ['#ffffff', '#f4f5f7']);
    expect(contrastRatio(yellow, '#f4f5f7')).toBeGreaterThanOrEqual(4.5);
    expect(textOn('#0b57d0')).toBe('#ffffff');
    expect(textOn('#ffcc00')).toBe('#1b1c1f');
  });
});
