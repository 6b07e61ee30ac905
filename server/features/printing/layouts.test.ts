import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LabelLayout } from '../../schemas/printing.ts';
import { defaultResourcesDir, labelsPerPage, loadLayouts, placements, slotRect } from './layouts.ts';

const shipped = loadLayouts(join(defaultResourcesDir(), 'layouts'));
const byId = (id: string) => shipped.find((l) => l.id === id)!;

describe('shipped layouts', () => {
  it('are the five the issue asks for, with the published label sizes', () => {
    expect(shipped.map((l) => [l.id, l.page.width, l.page.height, labelsPerPage(l), l.label.width, l.label.height])).toEqual([
      ['a4-grid-40', 210, 297, 24, 40, 40],
      ['avery-5160', 215.9, 279.4, 30, 66.675, 25.4],
      ['avery-l7160', 210, 297, 21, 63.5, 38.1],
      ['roll-25x25', 25, 25, 1, 25, 25],
      ['roll-50x50', 50, 50, 1, 50, 50],
    ]);
  });

  it('place sheet grids symmetrically on the page (published margins)', () => {
    for (const id of ['avery-l7160', 'avery-5160', 'a4-grid-40']) {
      const l = byId(id);
      const last = slotRect(l, labelsPerPage(l) - 1);
      expect(l.page.width - (last.x + last.width)).toBeCloseTo(l.margin.left, 0);
      expect(l.page.height - (last.y + last.height)).toBeCloseTo(l.margin.top, 1);
    }
  });

  it('number labels along rows, then down, then onto the next sheet', () => {
    const l = byId('avery-l7160');
    expect(slotRect(l, 4)).toEqual({ x: 7.25 + 66.04, y: 15.15 + 38.1, width: 63.5, height: 38.1 });
    expect(placements(l, 3, 20)).toEqual([
      { page: 0, slot: 20 },
      { page: 1, slot: 0 },
      { page: 1, slot: 1 },
    ]);
  });
});

describe('layout validation', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  const good = { ...byId('avery-l7160') };

  it('rejects a grid that runs off the page', () => {
    const r = LabelLayout.safeParse({ ...good, columns: 4 });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toMatch(/past the right page edge/);
  });

  it('rejects unknown fields and negative sizes', () => {
    expect(LabelLayout.safeParse({ ...good, colour: 'red' }).success).toBe(false);
    expect(LabelLayout.safeParse({ ...good, gap: { x: -1, y: 0 } }).success).toBe(false);
  });

  it('refuses to load a broken layout file, naming it', () => {
    dir = mkdtempSync(join(tmpdir(), 'layouts-'));
    writeFileSync(join(dir, 'a.json'), JSON.stringify(good));
    writeFileSync(join(dir, 'b.json'), JSON.stringify({ ...good, id: 'b', rows: 8 }));
    expect(() => loadLayouts(dir!)).toThrow(/^Layout b\.json: rows labels run .* past the bottom page edge/);
    writeFileSync(join(dir, 'b.json'), JSON.stringify(good));
    expect(() => loadLayouts(dir!)).toThrow('Layout b.json: duplicate id avery-l7160');
    writeFileSync(join(dir, 'b.json'), '{');
    expect(() => loadLayouts(dir!)).toThrow(/^Layout b\.json: not valid JSON/);
  });
});
