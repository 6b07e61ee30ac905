import { describe, expect, it } from 'vitest';
import fc from '../../../test/support/fast-check.ts';
import { decode40, encode40, normalizeSlug } from './crockford.ts';
import { permute, SPACE, unpermute } from './permutation.ts';

describe('slug encoding', () => {
  it('round-trips every 40-bit value through Crockford base32', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: SPACE - 1 }), (v) => {
        const s = encode40(v);
        expect(s).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
        expect(decode40(s)).toBe(v);
      }),
    );
  });

  it('permutation is a bijection (inverse undoes it) and stays in range', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: SPACE - 1 }), (v) => {
        const p = permute(v);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThan(SPACE);
        expect(unpermute(p)).toBe(v);
      }),
    );
  });

  it('consecutive values give unrelated-looking slugs', () => {
    const slugs = Array.from({ length: 1000 }, (_, i) => encode40(permute(i)));
    expect(new Set(slugs).size).toBe(1000);
    const sharedPrefix = slugs.filter((s, i) => i > 0 && s.slice(0, 3) === slugs[i - 1]!.slice(0, 3)).length;
    expect(sharedPrefix).toBeLessThan(20);
  });

  it('normalizes case and Crockford aliases', () => {
    expect(normalizeSlug('abcd0123')).toBe('ABCD0123');
    expect(normalizeSlug('oOiIlL12')).toBe('00111112');
    expect(normalizeSlug('ABCDU123')).toBeNull();
    expect(normalizeSlug('ABC')).toBeNull();
    expect(normalizeSlug('ABCD-123')).toBeNull();
  });
});
