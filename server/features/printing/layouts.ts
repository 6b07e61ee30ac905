import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { issuesToDetails } from '../../platform/validation.ts';
import { LabelLayout, type LabelLayoutT, type LayoutInfoT } from '../../schemas/printing.ts';

/** A rectangle on the page, in millimetres, origin top-left. */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Where Waymark's shipped data lives (label layouts, the caption font). */
export function defaultResourcesDir(): string {
  return join(import.meta.dirname, '..', '..', '..', 'resources');
}

/**
 * Reads and validates every `*.json` in `dir`, sorted by file name. A broken file stops the
 * load with its name and the failing fields: a layout that prints in the wrong place is worse
 * than a server that refuses to start.
 */
export function loadLayouts(dir: string): LabelLayoutT[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  const layouts: LabelLayoutT[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    } catch (err) {
      throw new Error(`Layout ${file}: not valid JSON (${(err as Error).message})`, { cause: err });
    }
    const result = LabelLayout.safeParse(raw);
    if (!result.success) {
      const details = issuesToDetails(result.error.issues);
      throw new Error(`Layout ${file}: ${Object.entries(details).map(([k, v]) => `${k} ${v}`).join('; ')}`);
    }
    if (seen.has(result.data.id)) throw new Error(`Layout ${file}: duplicate id ${result.data.id}`);
    seen.add(result.data.id);
    layouts.push(result.data);
  }
  if (layouts.length === 0) throw new Error(`No label layouts in ${dir}`);
  return layouts;
}

export function labelsPerPage(layout: LabelLayoutT): number {
  return layout.columns * layout.rows;
}

/** The rectangle of label `slot` (0 = top-left, then along the row, then down). */
export function slotRect(layout: LabelLayoutT, slot: number): Rect {
  const col = slot % layout.columns;
  const row = Math.floor(slot / layout.columns);
  return {
    x: layout.margin.left + col * (layout.label.width + layout.gap.x),
    y: layout.margin.top + row * (layout.label.height + layout.gap.y),
    width: layout.label.width,
    height: layout.label.height,
  };
}

export function layoutInfo(layout: LabelLayoutT): LayoutInfoT {
  const n = labelsPerPage(layout);
  return {
    ...layout,
    labels_per_page: n,
    slots: Array.from({ length: n }, (_, i) => slotRect(layout, i)),
  };
}

/**
 * Which page and slot each of `count` labels lands on when the first `start` labels of the
 * first sheet are already used.
 */
export function placements(layout: LabelLayoutT, count: number, start: number): { page: number; slot: number }[] {
  const perPage = labelsPerPage(layout);
  return Array.from({ length: count }, (_, i) => {
    const position = start + i;
    return { page: Math.floor(position / perPage), slot: position % perPage };
  });
}
