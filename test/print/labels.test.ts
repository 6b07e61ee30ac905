import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defaultResourcesDir, labelsPerPage, loadLayouts, slotRect } from '../../server/features/printing/layouts.ts';
import { type LabelItem, LabelTooSmallError, type PdfJob, PT_PER_MM, labelsPdfBuffer, planLabels, writeCalibrationPdf } from '../../server/features/printing/pdf.ts';
import { QUIET_ZONE_MODULES } from '../../server/features/printing/qr.ts';
import type { ValidationError } from '../../server/platform/errors.ts';
import type { LabelLayoutT } from '../../server/schemas/printing.ts';
import { type Gray, type PxRect, crop, darkBox, darkOutside, decodeAll, missingTools, mmToPx, renderPdf } from './raster.ts';

const skip = missingTools();

const resources = defaultResourcesDir();
const layouts = loadLayouts(join(resources, 'layouts'));
const font = readFileSync(join(resources, 'fonts', 'DejaVuSansMono.ttf'));
const DPI = 200;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Distinct slug-like scan URLs, as printableUrl makes them (upper case). */
function urls(n: number, seed = 7): string[] {
  let x = seed * 0x9e3779b9;
  const out = Array.from({ length: n }, () => {
    let slug = '';
    for (let k = 0; k < 8; k++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      slug += CROCKFORD[(x >>> 0) % 32];
    }
    return `HTTPS://SCAN.WAYMARK.EXAMPLE/V/${slug}`;
  });
  if (new Set(out).size !== n) throw new Error('test URLs must be distinct');
  return out;
}

function job(layout: LabelLayoutT, texts: string[], extra: Partial<PdfJob> = {}): PdfJob {
  const items: LabelItem[] = texts.map((text, i) => ({ text, caption: `WM-${String(i + 1).padStart(3, '0')}` }));
  return {
    layout,
    items,
    captions: true,
    cutMarks: false,
    offsetX: 0,
    offsetY: 0,
    start: 0,
    title: 'test',
    createdAt: new Date('2026-11-21T12:00:00Z'),
    font,
    ...extra,
  };
}

/** Label rectangle of each item in pixels on its page, shifted by the calibration offsets. */
function labelRects(j: PdfJob, pages: Gray[]) {
  return planLabels(j).map((p) =>
    mmToPx({ x: p.label.x + j.offsetX, y: p.label.y + j.offsetY, width: p.label.width, height: p.label.height }, DPI, pages[p.page]!),
  );
}

/**
 * The core check: render, cut out each label's rectangle, decode it on its own. The code found
 * in label i must be item i (reading order), alone, and every dark pixel of each page must lie
 * inside a label rectangle (so no code or caption spills over a label edge).
 */
function checkSheet(j: PdfJob, pdf: Buffer) {
  const pages = renderPdf(pdf, DPI);
  const plan = planLabels(j);
  expect(pages.length).toBe(plan[plan.length - 1]!.page + 1);
  for (const page of pages) {
    expect(page.width).toBe(Math.round((j.layout.page.width * PT_PER_MM * DPI) / 72));
  }
  const rects = labelRects(j, pages);
  const decoded = decodeAll(plan.map((p, i) => crop(pages[p.page]!, rects[i]!)));
  expect(decoded).toEqual(j.items.map((it) => [it.text]));
  if (!j.cutMarks) {
    pages.forEach((page, n) => {
      const onPage = rects.filter((_, i) => plan[i]!.page === n);
      expect(darkOutside(page, onPage)).toBe(0);
    });
  }
  return { pages, plan, rects };
}

describe.skipIf(skip)('label sheets decode in reading order, each code inside its label', () => {
  for (const layout of layouts) {
    it(`${layout.id}: ${layout.kind === 'roll' ? 3 : labelsPerPage(layout) + 4} labels over two or more pages`, async () => {
      const n = layout.kind === 'roll' ? 3 : labelsPerPage(layout) + 4;
      const j = job(layout, urls(n));
      const pdf = await labelsPdfBuffer(j);
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
      const { pages, plan, rects } = checkSheet(j, pdf);
      // The quiet zone is white on every label: 4 modules between the code and anything else.
      plan.forEach((p, i) => {
        const k = DPI / 25.4;
        const code = darkBox(pages[p.page]!, mmToPx(p.qrBox, DPI, pages[p.page]!));
        expect(code).not.toBeNull();
        const quietPx = QUIET_ZONE_MODULES * p.moduleMm * k;
        expect(code!.x0 - rects[i]!.x0).toBeGreaterThanOrEqual(Math.floor(layout.padding * k + quietPx) - 1);
        expect(code!.y0 - rects[i]!.y0).toBeGreaterThanOrEqual(Math.floor(layout.padding * k + quietPx) - 1);
        expect(rects[i]!.x1 - code!.x1).toBeGreaterThanOrEqual(Math.floor(layout.padding * k + quietPx) - 1);
      });
    });
  }

  it('captions appear under the code and caption=none leaves only the code', async () => {
    const layout = layouts.find((l) => l.id === 'roll-50x50')!;
    const texts = urls(1);
    const withCaption = renderPdf(await labelsPdfBuffer(job(layout, texts)), DPI)[0]!;
    const bare = job(layout, texts, { captions: false });
    const without = renderPdf(await labelsPdfBuffer(bare), DPI)[0]!;
    const plan = planLabels(bare)[0]!;
    const codeBox = mmToPx(plan.qrBox, DPI, without);
    // Without a caption nothing is printed outside the code's square.
    expect(darkOutside(without, [codeBox])).toBe(0);
    // With one, there is ink below the code's square.
    const captioned = planLabels(job(layout, texts))[0]!;
    const below = mmToPx(captioned.captionBox!, DPI, withCaption);
    expect(darkBox(withCaption, below)).not.toBeNull();
    expect(decodeAll([withCaption, without])).toEqual([texts, texts]);
  });

  it('captions are real text in the embedded DejaVu Sans Mono subset, in label order', async () => {
    const layout = layouts.find((l) => l.id === 'avery-l7160')!;
    const j = job(layout, urls(25));
    const pdf = await labelsPdfBuffer(j);
    const raw = pdf.toString('latin1');
    expect(raw).toMatch(/\/BaseFont \/[A-Z]{6}\+DejaVuSansMono/);
    expect(raw).toContain('/FontFile2'); // the TrueType program is inside the PDF
    expect(raw).not.toMatch(/\/BaseFont \/(Helvetica|Courier|Times)/);
    const text = spawnSync('pdftotext', ['-layout', '-', '-'], { input: pdf, encoding: 'utf8' }).stdout;
    expect(text.split(/\s+/).filter(Boolean)).toEqual(j.items.map((it) => it.caption));
  });

  it('start skips the used labels of a half-used sheet', async () => {
    const layout = layouts.find((l) => l.id === 'avery-l7160')!;
    const j = job(layout, urls(20), { start: 5 });
    const { pages, plan } = checkSheet(j, await labelsPdfBuffer(j));
    expect(plan[0]).toMatchObject({ page: 0, slot: 5 });
    expect(plan[16]).toMatchObject({ page: 1, slot: 0 });
    expect(pages).toHaveLength(2);
  });

  it('calibration offsets move the whole print by that many millimetres', async () => {
    const layout = layouts.find((l) => l.id === 'a4-grid-40')!;
    const texts = urls(4);
    const base = renderPdf(await labelsPdfBuffer(job(layout, texts)), DPI)[0]!;
    const shifted = job(layout, texts, { offsetX: 2, offsetY: -1.5 });
    const { pages } = checkSheet(shifted, await labelsPdfBuffer(shifted));
    const a = darkBox(base)!;
    const b = darkBox(pages[0]!)!;
    const k = DPI / 25.4;
    expect(Math.abs(b.x0 - a.x0 - 2 * k)).toBeLessThanOrEqual(1);
    expect(Math.abs(b.y0 - a.y0 + 1.5 * k)).toBeLessThanOrEqual(1);
  });

  it('cut marks are drawn in the margins only, outside every label', async () => {
    const layout = layouts.find((l) => l.id === 'a4-grid-40')!;
    const j = job(layout, urls(24), { cutMarks: true });
    const { pages, rects } = checkSheet(j, await labelsPdfBuffer(j));
    const page = pages[0]!;
    const grid: PxRect = { x0: Math.min(...rects.map((r) => r.x0)), y0: Math.min(...rects.map((r) => r.y0)), x1: Math.max(...rects.map((r) => r.x1)), y1: Math.max(...rects.map((r) => r.y1)) };
    const marks = darkOutside(page, [grid]);
    expect(marks).toBeGreaterThan(0);
    // Nothing but the labels inside the grid area: gaps between labels stay clean.
    const inGrid = crop(page, grid);
    const shiftedRects = rects.map((r) => ({ x0: r.x0 - grid.x0, y0: r.y0 - grid.y0, x1: r.x1 - grid.x0, y1: r.y1 - grid.y0 }));
    expect(darkOutside(inGrid, shiftedRects)).toBe(0);
  });

  it('prints a 500-node batch as one PDF', { timeout: 180_000 }, async () => {
    const layout = layouts.find((l) => l.id === 'avery-5160')!;
    const j = job(layout, urls(500, 99));
    const pdf = await labelsPdfBuffer(j);
    const { pages } = checkSheet(j, pdf);
    expect(pages).toHaveLength(Math.ceil(500 / 30));
  });
});

describe.skipIf(skip)('calibration page', () => {
  async function calibration(layout: LabelLayoutT, offsetX = 0, offsetY = 0) {
    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (c: Buffer) => chunks.push(c));
    await writeCalibrationPdf({ layout, offsetX, offsetY, createdAt: new Date(0), font }, sink);
    return renderPdf(Buffer.concat(chunks), DPI);
  }

  it('outlines every label exactly and crosses its centre, shifted by the offsets', async () => {
    const layout = layouts.find((l) => l.id === 'avery-l7160')!;
    for (const [ox, oy] of [[0, 0], [1.5, -2]] as const) {
      const [page] = await calibration(layout, ox, oy);
      const k = DPI / 25.4;
      for (const slot of [0, 4, 20]) {
        const r = slotRect(layout, slot);
        const px = mmToPx({ x: r.x + ox, y: r.y + oy, width: r.width, height: r.height }, DPI, page!);
        const box = darkBox(page!, px)!;
        // The outline runs along the label edge (within a pixel) …
        expect(Math.abs(box.x0 - px.x0)).toBeLessThanOrEqual(1);
        expect(Math.abs(box.y0 - px.y0)).toBeLessThanOrEqual(1);
        expect(Math.abs(box.x1 - px.x1)).toBeLessThanOrEqual(1);
        expect(Math.abs(box.y1 - px.y1)).toBeLessThanOrEqual(1);
        // … and the cross is at its centre.
        const cx = Math.round((r.x + ox + r.width / 2) * k);
        const cy = Math.round((r.y + oy + r.height / 2) * k);
        const dark = (x: number, y: number) => page!.data[y * page!.width + x]! < 128;
        expect([-1, 0, 1].some((d) => dark(cx + 10, cy + d)) && [-1, 0, 1].some((d) => dark(cx + d, cy + 10))).toBe(true);
        expect(dark(cx + 40, cy + 40)).toBe(false);
      }
    }
  });
});

describe('label size checks', () => {
  const tiny: LabelLayoutT = {
    id: 'tiny-15',
    name: 'Tiny 15 mm',
    kind: 'roll',
    page: { width: 15, height: 15 },
    margin: { top: 0, left: 0 },
    columns: 1,
    rows: 1,
    label: { width: 15, height: 15 },
    gap: { x: 0, y: 0 },
    padding: 1,
  };

  it('refuses a label too small for the URL, naming the layout and the size needed', () => {
    const j = job(tiny, urls(1));
    let error: unknown;
    try {
      planLabels(j);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LabelTooSmallError);
    const e = error as LabelTooSmallError;
    expect(e.status).toBe(422);
    expect(e.message).toMatch(/^Layout tiny-15: the 15 × 15 mm label is too small for the scan URL HTTPS:\/\/SCAN\.WAYMARK\.EXAMPLE\/V\/\w{8}\. Its QR code needs a 18\.5 mm square/);
    expect(e.details).toEqual({ layout: e.message });
  });

  it('refuses a long URL on the 25 mm roll label but prints the usual one', () => {
    const roll = layouts.find((l) => l.id === 'roll-25x25')!;
    expect(() => planLabels(job(roll, urls(1)))).not.toThrow();
    const long = `HTTPS://SCAN.A-RATHER-LONG-CUSTOMER-DOMAIN.EXAMPLE.COM/TRACK/FIELD/ASSETS/V/ABCDEFGH`;
    expect(() => planLabels(job(roll, [long]))).toThrow(LabelTooSmallError);
  });

  it('refuses a start position off the sheet', () => {
    const l7160 = layouts.find((l) => l.id === 'avery-l7160')!;
    const detailsOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as ValidationError).details;
      }
      return undefined;
    };
    expect(detailsOf(() => planLabels(job(l7160, urls(1), { start: 21 })))).toEqual({ start: 'must be between 0 and 20 for avery-l7160 (21 labels per sheet)' });
    expect(planLabels(job(l7160, urls(1), { start: 20 }))[0]).toMatchObject({ page: 0, slot: 20 });
    const roll = layouts.find((l) => l.id === 'roll-50x50')!;
    expect(detailsOf(() => planLabels(job(roll, urls(1), { start: 1 })))).toEqual({ start: 'must be 0 for roll-50x50 (one label per page)' });
  });
});
