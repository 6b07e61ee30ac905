import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layoutTitle, parseOffset } from './printOptions.ts';

describe('layoutTitle', () => {
  it('splits a name at its dash or its closing parenthesis', () => {
    expect(layoutTitle('Avery L7160 — A4, 21 labels (63.5 × 38.1 mm)')).toEqual({ title: 'Avery L7160', detail: 'A4, 21 labels (63.5 × 38.1 mm)' });
    expect(layoutTitle('Roll label 25 × 25 mm (one label per page)')).toEqual({ title: 'Roll label 25 × 25 mm', detail: 'one label per page' });
    expect(layoutTitle('Plain')).toEqual({ title: 'Plain', detail: '' });
  });

  it('gives every bundled layout a short title, and titles that tell them apart', () => {
    const dir = join(import.meta.dirname, '..', '..', 'resources', 'layouts');
    const names = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { name: string }).name);
    const titles = names.map((n) => layoutTitle(n).title);
    expect(new Set(titles).size).toBe(names.length);
    for (const t of titles) expect(t.length).toBeLessThanOrEqual(24);
  });
});

describe('parseOffset', () => {
  it('reads millimetres within ±10, a comma as the decimal mark, nothing as none', () => {
    expect(parseOffset('')).toBeUndefined();
    expect(parseOffset(' 1.5 ')).toBe(1.5);
    expect(parseOffset('-0,5')).toBe(-0.5);
    expect(parseOffset('10')).toBe(10);
    expect(parseOffset('10.5')).toBe('bad');
    expect(parseOffset('abc')).toBe('bad');
  });
});
