import type { LabelLayoutT } from '../../schemas/printing.ts';
import { labelsPerPage, slotRect } from './layouts.ts';
import { BUILT_IN_QR_STYLE, type QrStyleT } from '../../schemas/qrStyle.ts';
import { type PlannedLabel, artOrigin, cutMarkLines } from './pdf.ts';
import { artElements, escapeXml } from './qrArtSvg.ts';

export interface PreviewJob {
  layout: LabelLayoutT;
  plan: PlannedLabel[];
  cutMarks: boolean;
  offsetX: number;
  offsetY: number;
  start: number;
  style?: QrStyleT;
  logoPng?: Buffer | null;
}

const n = (v: number) => String(Math.round(v * 1000) / 1000);

/**
 * One page of a print job as SVG (1 unit = 1 mm), for the console's preview: the same plan as
 * the PDF (codes, captions, cut marks, offsets), plus what the PDF never prints: each label's
 * outline (dashed) and, on the first page, the labels skipped by `start` (shaded). Captions
 * name the font the PDF embeds and fall back to any monospace font.
 */
export function renderPageSvg(job: PreviewJob, page: number): string {
  const { layout } = job;
  const out: string[] = [];
  const w = layout.page.width;
  const h = layout.page.height;
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${n(w)}mm" height="${n(h)}mm" viewBox="0 0 ${n(w)} ${n(h)}">`,
    `<rect width="${n(w)}" height="${n(h)}" fill="#fff"/>`,
  );
  const radius = layout.label.corner_radius ?? 0;
  const perPage = labelsPerPage(layout);
  out.push(`<g fill="none" stroke="#9aa4b2" stroke-width="0.25" stroke-dasharray="1.2 0.8">`);
  for (let slot = 0; slot < perPage; slot++) {
    const r = slotRect(layout, slot);
    const used = page === 0 && slot < job.start;
    out.push(`<rect x="${n(r.x)}" y="${n(r.y)}" width="${n(r.width)}" height="${n(r.height)}" rx="${n(radius)}"${used ? ' fill="#e5e7eb"' : ''}/>`);
  }
  out.push('</g>');
  out.push(`<g transform="translate(${n(job.offsetX)} ${n(job.offsetY)})">`);
  if (job.cutMarks) {
    out.push('<g stroke="#000" stroke-width="0.1">');
    for (const [x1, y1, x2, y2] of cutMarkLines(layout)) out.push(`<line x1="${n(x1)}" y1="${n(y1)}" x2="${n(x2)}" y2="${n(y2)}"/>`);
    out.push('</g>');
  }
  for (const label of job.plan) {
    if (label.page !== page) continue;
    const origin = artOrigin(label);
    out.push(`<g transform="translate(${n(origin.x)} ${n(origin.y)}) scale(${n(label.moduleMm)})">${artElements(label.art, job.style ?? BUILT_IN_QR_STYLE, job.logoPng ?? null, true)}</g>`);
    const fit = label.captionFit;
    if (fit) {
      out.push(
        `<text x="${n(fit.x + fit.width / 2)}" y="${n(fit.baseline)}" font-family="'DejaVu Sans Mono', monospace" font-size="${n(fit.sizePt / (72 / 25.4))}" text-anchor="middle" fill="#000">${escapeXml(fit.text)}</text>`,
      );
    }
  }
  out.push('</g></svg>');
  return out.join('\n');
}
