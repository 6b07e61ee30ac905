import { PassThrough, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import PDFDocument from 'pdfkit';
import { ValidationError } from '../../platform/errors.ts';
import type { LabelLayoutT } from '../../schemas/printing.ts';
import { ASCENT_EM, LINE_BOX_EM, MONO_ADVANCE_EM } from './captionFont.ts';
import { type Rect, labelsPerPage, placements, slotRect } from './layouts.ts';
import { BUILT_IN_QR_STYLE, type QrStyleT } from '../../schemas/qrStyle.ts';
import { MIN_MODULE_MM, type QrSymbol } from './qr.ts';
import { type ArtFit, type QrArt, fitArt } from './qrArt.ts';

export const PT_PER_MM = 72 / 25.4;
const pt = (mm: number) => mm * PT_PER_MM;

/** Caption band under the code: a share of the free height, clamped (mm). */
const CAPTION_SHARE = 0.13;
const CAPTION_MIN_MM = 2.4;
const CAPTION_MAX_MM = 5;
export { ASCENT_EM, LINE_BOX_EM, MONO_ADVANCE_EM };
/** Below this the caption is truncated with an ellipsis rather than shrunk further. */
const CAPTION_MIN_PT = 4;
const CUT_MARK_LENGTH_MM = 5;
const CUT_MARK_CLEARANCE_MM = 1;
const CUT_MARK_LINE_MM = 0.1;

/** The label is too small for the code it must carry: 422, with the layout named. */
export class LabelTooSmallError extends ValidationError {
  constructor(message: string) {
    super({ layout: message }, message);
  }
}

export interface LabelItem {
  /** Exactly what the code encodes (see printableUrl). */
  text: string;
  /** Caption under the code; '' draws none. */
  caption: string;
}

export interface PdfJob {
  layout: LabelLayoutT;
  items: LabelItem[];
  /** Reserve the caption band under each code (false for caption=none). */
  captions: boolean;
  cutMarks: boolean;
  /** Calibration: moves everything printed on the page (mm; + = right / down). */
  offsetX: number;
  offsetY: number;
  /** Labels already used on the first sheet. */
  start: number;
  title: string;
  createdAt: Date;
  /** The font embedded for captions (TTF bytes). */
  font: Buffer;
  minModuleMm?: number;
  /** How codes look (default: black square modules on white, no logo, no frame). */
  style?: QrStyleT;
  /** The organization's logo (PNG), drawn when `style.logo`. */
  logoPng?: Buffer | null;
}

export interface PlannedLabel {
  index: number;
  page: number;
  slot: number;
  /** The label on the page before calibration offsets (mm). */
  label: Rect;
  /** The square holding the code and its quiet zone (mm, before offsets). */
  qrBox: Rect;
  symbol: QrSymbol;
  moduleMm: number;
  /** The styled code (module units); drawn centred in `qrBox`, one unit = `moduleMm`. */
  art: QrArt;
  captionBox: Rect | null;
  caption: string;
  /** The caption as drawn: maybe shrunk or cut with …; null when there is none. */
  captionFit: CaptionFit | null;
}

export interface CaptionFit {
  text: string;
  sizePt: number;
  /** Left end of the text and top of its line box (mm, before offsets). */
  x: number;
  y: number;
  width: number;
  /** Baseline (mm). */
  baseline: number;
}

/** Shrinks a caption to its box (down to CAPTION_MIN_PT), then cuts it with an ellipsis. */
export function fitCaption(text: string, box: Rect): CaptionFit | null {
  if (!text) return null;
  const mmPerPt = 1 / PT_PER_MM;
  let chars = Array.from(text);
  let size = pt(box.height) / LINE_BOX_EM;
  const widthMm = (n: number, sz: number) => n * MONO_ADVANCE_EM * sz * mmPerPt;
  if (widthMm(chars.length, size) > box.width) size = Math.max(CAPTION_MIN_PT, (size * box.width) / widthMm(chars.length, size));
  if (widthMm(chars.length, size) > box.width + 1e-6) {
    const fits = Math.max(1, Math.floor(box.width / widthMm(1, size)) - 1);
    chars = [...chars.slice(0, fits), '…'];
  }
  const width = widthMm(chars.length, size);
  const lineH = LINE_BOX_EM * size * mmPerPt;
  const y = box.y + (box.height - lineH) / 2;
  return { text: chars.join(''), sizePt: size, x: box.x + (box.width - width) / 2, y, width, baseline: y + ASCENT_EM * size * mmPerPt };
}

export interface LabelGeometry {
  /** Side of the square for code + quiet zone (mm). */
  side: number;
  captionHeight: number;
}

/** Where the code and the caption go inside a label (same for every label of a layout). */
export function labelGeometry(layout: LabelLayoutT, captions: boolean): LabelGeometry {
  const innerW = layout.label.width - 2 * layout.padding;
  const innerH = layout.label.height - 2 * layout.padding;
  const captionHeight = captions ? Math.min(CAPTION_MAX_MM, Math.max(CAPTION_MIN_MM, innerH * CAPTION_SHARE)) : 0;
  return { side: Math.max(0, Math.min(innerW, innerH - captionHeight)), captionHeight };
}

/**
 * Places every item and fits its code; throws before anything is drawn when the label is too
 * small for a code or `start` is off the sheet, so an HTTP reply can still be a clean 422.
 */
export function planLabels(job: Omit<PdfJob, 'font' | 'title' | 'createdAt'>): PlannedLabel[] {
  const { layout } = job;
  const perPage = labelsPerPage(layout);
  if (!Number.isInteger(job.start) || job.start < 0 || job.start >= perPage) {
    throw new ValidationError({
      start: perPage === 1 ? `must be 0 for ${layout.id} (one label per page)` : `must be between 0 and ${perPage - 1} for ${layout.id} (${perPage} labels per sheet)`,
    });
  }
  if (job.items.length === 0) throw new ValidationError({ items: 'nothing to print' });
  const geometry = labelGeometry(layout, job.captions);
  const minModule = job.minModuleMm ?? MIN_MODULE_MM;
  const style = job.style ?? BUILT_IN_QR_STYLE;
  const fits = new Map<string, ArtFit>();
  const spots = placements(layout, job.items.length, job.start);
  return job.items.map((item, index) => {
    let fit = fits.get(item.text);
    if (!fit) {
      fit = fitArt(item.text, geometry.side, minModule, { moduleStyle: style.module_style, logo: style.logo, frameText: style.frame_text });
      fits.set(item.text, fit);
    }
    if (!fit.ok) {
      const extras = [style.logo ? 'error correction H for the logo' : '', style.frame_text ? 'the frame' : ''].filter(Boolean).join(' and ');
      const needs = Number.isFinite(fit.neededMm)
        ? `a ${fit.neededMm.toFixed(1)} mm square (QR version ${fit.version}, modules of ${minModule} mm, quiet zone${extras ? ` and ${extras}` : ''} included)`
        : 'more data than a QR code holds';
      throw new LabelTooSmallError(
        `Layout ${layout.id}: the ${layout.label.width} × ${layout.label.height} mm label is too small for the scan URL ${item.text}. ` +
          `Its QR code needs ${needs}, but the label leaves ${geometry.side.toFixed(1)} mm` +
          `${job.captions ? ' above the caption' : ''}. Choose a larger layout${job.captions ? ', caption=none' : ''}${extras ? ', no logo or frame' : ''} or a shorter scan base.`,
      );
    }
    const { page, slot } = spots[index]!;
    const label = slotRect(layout, slot);
    const blockH = geometry.side + geometry.captionHeight;
    const captionBox = job.captions
      ? { x: label.x + layout.padding, y: label.y + layout.padding + (label.height - 2 * layout.padding - blockH) / 2 + geometry.side, width: label.width - 2 * layout.padding, height: geometry.captionHeight }
      : null;
    const top = label.y + layout.padding + (label.height - 2 * layout.padding - blockH) / 2;
    const left = label.x + (label.width - geometry.side) / 2;
    return {
      index,
      page,
      slot,
      label,
      qrBox: { x: left, y: top, width: geometry.side, height: geometry.side },
      symbol: fit.art.symbol,
      moduleMm: fit.moduleMm,
      art: fit.art,
      captionBox,
      caption: job.captions ? item.caption : '',
      captionFit: captionBox ? fitCaption(item.caption, captionBox) : null,
    };
  });
}

/** Top-left corner (mm, before offsets) of a label's styled code: centred in its square. */
export function artOrigin(plan: PlannedLabel): { x: number; y: number } {
  return { x: plan.qrBox.x + (plan.qrBox.width - plan.art.width * plan.moduleMm) / 2, y: plan.qrBox.y + (plan.qrBox.height - plan.art.height * plan.moduleMm) / 2 };
}

/**
 * The logo opened once per document: pdfkit embeds a Buffer passed to image() anew at every
 * call, while an opened image is one XObject shared by every label. (Its types omit openImage.)
 */
function openLogo(doc: PDFKit.PDFDocument, png: Buffer): PDFKit.Mixins.ImageSrc {
  return (doc as unknown as { openImage(src: Buffer): PDFKit.Mixins.ImageSrc }).openImage(png);
}

function drawCode(doc: PDFKit.PDFDocument, plan: PlannedLabel, style: QrStyleT, logo: PDFKit.Mixins.ImageSrc | null): void {
  const { art } = plan;
  const origin = artOrigin(plan);
  doc.save();
  doc.translate(pt(origin.x), pt(origin.y));
  doc.scale(pt(plan.moduleMm));
  // White labels need no background: the paper is the quiet zone.
  if (style.bg !== '#FFFFFF') doc.rect(art.code.x, art.code.y, art.code.side, art.code.side).fill(style.bg);
  if (art.frame) {
    const f = art.frame;
    doc.path(f.path).fill(style.fg);
    const width = Array.from(f.text).length * MONO_ADVANCE_EM * f.fontSize;
    doc.fillColor(style.bg).fontSize(f.fontSize);
    doc.text(f.text, f.centerX - width / 2, f.baseline - ASCENT_EM * f.fontSize, { lineBreak: false });
  }
  // One path of every module, filled once: no hairline seams between modules.
  doc.path(art.modulesPath).fill(style.fg);
  if (art.logo && logo) doc.image(logo, art.logo.x, art.logo.y, { fit: [art.logo.side, art.logo.side], align: 'center', valign: 'center' });
  doc.restore();
}

function drawCaption(doc: PDFKit.PDFDocument, fit: CaptionFit): void {
  doc.fillColor('#000000').fontSize(fit.sizePt);
  // No `width` option: pdfkit then draws one line and never wraps or adds a page.
  doc.text(fit.text, pt(fit.x), pt(fit.y), { lineBreak: false });
}

/** Crop marks in the page margins, in line with every label edge: [x1, y1, x2, y2] in mm. */
export function cutMarkLines(layout: LabelLayoutT): [number, number, number, number][] {
  const xs = new Set<number>();
  const ys = new Set<number>();
  for (let c = 0; c < layout.columns; c++) {
    const r = slotRect(layout, c);
    xs.add(Math.round(r.x * 1000) / 1000).add(Math.round((r.x + r.width) * 1000) / 1000);
  }
  for (let row = 0; row < layout.rows; row++) {
    const r = slotRect(layout, row * layout.columns);
    ys.add(Math.round(r.y * 1000) / 1000).add(Math.round((r.y + r.height) * 1000) / 1000);
  }
  const gridLeft = layout.margin.left;
  const gridTop = layout.margin.top;
  const gridRight = Math.max(...xs);
  const gridBottom = Math.max(...ys);
  const space = {
    top: gridTop,
    bottom: layout.page.height - gridBottom,
    left: gridLeft,
    right: layout.page.width - gridRight,
  };
  const length = (room: number) => Math.min(CUT_MARK_LENGTH_MM, room - CUT_MARK_CLEARANCE_MM - 0.5);
  const gap = CUT_MARK_CLEARANCE_MM;
  const lines: [number, number, number, number][] = [];
  for (const x of xs) {
    if (length(space.top) >= 1) lines.push([x, gridTop - gap - length(space.top), x, gridTop - gap]);
    if (length(space.bottom) >= 1) lines.push([x, gridBottom + gap, x, gridBottom + gap + length(space.bottom)]);
  }
  for (const y of ys) {
    if (length(space.left) >= 1) lines.push([gridLeft - gap - length(space.left), y, gridLeft - gap, y]);
    if (length(space.right) >= 1) lines.push([gridRight + gap, y, gridRight + gap + length(space.right), y]);
  }
  return lines;
}

function drawCutMarks(doc: PDFKit.PDFDocument, layout: LabelLayoutT): void {
  const lines = cutMarkLines(layout);
  if (lines.length === 0) return;
  doc.save();
  doc.lineWidth(pt(CUT_MARK_LINE_MM)).strokeColor('#000000');
  for (const [x1, y1, x2, y2] of lines) doc.moveTo(pt(x1), pt(y1)).lineTo(pt(x2), pt(y2));
  doc.stroke();
  doc.restore();
}

/**
 * `finished(out)` rejects as soon as a client goes away, possibly while pages are still being
 * drawn and before anyone awaits it: mark it handled now (an unhandled rejection would end the
 * process) and let the caller see the error when it awaits.
 */
function observed<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

/**
 * Writes the label PDF to `out`, one page at a time (pdfkit flushes each finished page), yielding
 * to the event loop between pages so a 500-label batch never stalls scans served by the same
 * process. Validation happens first: nothing is written when the job is refused. Pass the `plan`
 * when it was made earlier (to refuse a request before its response headers go out).
 */
export async function writeLabelsPdf(job: PdfJob, out: Writable, plan: PlannedLabel[] = planLabels(job)): Promise<void> {
  const { layout } = job;
  const doc = new PDFDocument({
    autoFirstPage: false,
    compress: true,
    info: { Title: job.title, Creator: 'Waymark', Producer: 'Waymark (pdfkit)', CreationDate: job.createdAt, ModDate: job.createdAt },
  });
  const done = observed(finished(out));
  doc.pipe(out);
  doc.registerFont('caption', job.font);
  doc.font('caption');
  const size: [number, number] = [pt(layout.page.width), pt(layout.page.height)];
  const pages = plan.length === 0 ? 0 : plan[plan.length - 1]!.page + 1;
  const style = job.style ?? BUILT_IN_QR_STYLE;
  const logo = style.logo && job.logoPng ? openLogo(doc, job.logoPng) : null;
  let i = 0;
  for (let page = 0; page < pages; page++) {
    if (page > 0) await new Promise((resolve) => setImmediate(resolve));
    if (out.destroyed) break; // the client went away: stop drawing, `done` reports it
    doc.addPage({ size, margin: 0 });
    doc.save();
    doc.translate(pt(job.offsetX), pt(job.offsetY));
    if (job.cutMarks) drawCutMarks(doc, layout);
    doc.fillColor('#000000');
    for (; i < plan.length && plan[i]!.page === page; i++) {
      const label = plan[i]!;
      drawCode(doc, label, style, logo);
      if (label.captionFit) drawCaption(doc, label.captionFit);
    }
    doc.restore();
  }
  doc.end();
  await done;
}

/** The whole PDF in memory (single labels, tests, the benchmark). */
export async function labelsPdfBuffer(job: PdfJob, plan: PlannedLabel[] = planLabels(job)): Promise<Buffer> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  await writeLabelsPdf(job, sink, plan);
  return Buffer.concat(chunks);
}

export interface CalibrationJob {
  layout: LabelLayoutT;
  offsetX: number;
  offsetY: number;
  createdAt: Date;
  font: Buffer;
}

const CROSSHAIR_MM = 3;
const SCALE_BAR_MM = 50;

/**
 * A calibration page: every label's outline, a cross at each label's centre and its number,
 * plus (where the top margin has room) a 50 mm bar to check the printer does not scale. Printed
 * on plain paper and held over a label sheet against the light, it shows at once how far off
 * the printer is.
 */
export async function writeCalibrationPdf(job: CalibrationJob, out: Writable): Promise<void> {
  const { layout } = job;
  const doc = new PDFDocument({
    autoFirstPage: false,
    compress: true,
    info: { Title: `Waymark calibration — ${layout.id}`, Creator: 'Waymark', Producer: 'Waymark (pdfkit)', CreationDate: job.createdAt, ModDate: job.createdAt },
  });
  const done = observed(finished(out));
  doc.pipe(out);
  doc.registerFont('caption', job.font);
  doc.font('caption');
  doc.addPage({ size: [pt(layout.page.width), pt(layout.page.height)], margin: 0 });
  doc.save();
  doc.translate(pt(job.offsetX), pt(job.offsetY));
  doc.lineWidth(pt(0.15)).strokeColor('#000000').fillColor('#000000');
  const perPage = labelsPerPage(layout);
  const numberSize = Math.min(8, pt(Math.min(layout.label.width, layout.label.height)) / 6);
  for (let slot = 0; slot < perPage; slot++) {
    const r = slotRect(layout, slot);
    // The outline sits just inside the label, so it never runs into a neighbour.
    const inset = 0.075;
    doc.rect(pt(r.x + inset), pt(r.y + inset), pt(r.width - 2 * inset), pt(r.height - 2 * inset));
    const cx = r.x + r.width / 2;
    const cy = r.y + r.height / 2;
    doc.moveTo(pt(cx - CROSSHAIR_MM), pt(cy)).lineTo(pt(cx + CROSSHAIR_MM), pt(cy));
    doc.moveTo(pt(cx), pt(cy - CROSSHAIR_MM)).lineTo(pt(cx), pt(cy + CROSSHAIR_MM));
    doc.stroke();
    if (perPage > 1) {
      doc.fontSize(numberSize);
      doc.text(String(slot + 1), pt(r.x + 1), pt(r.y + 0.8), { lineBreak: false });
    }
  }
  if (layout.margin.top >= 10 && layout.page.width >= SCALE_BAR_MM + 20) {
    doc.fontSize(7);
    doc.text(
      `Waymark calibration · ${layout.id} · offset x ${job.offsetX} mm, y ${job.offsetY} mm · the bar below must measure ${SCALE_BAR_MM} mm`,
      pt(layout.margin.left + 1),
      pt(2),
      { lineBreak: false },
    );
    const y = Math.min(layout.margin.top - 3, 8);
    const x0 = layout.margin.left + 1;
    doc.moveTo(pt(x0), pt(y)).lineTo(pt(x0 + SCALE_BAR_MM), pt(y));
    for (let k = 0; k <= SCALE_BAR_MM; k += 10) doc.moveTo(pt(x0 + k), pt(y - 1)).lineTo(pt(x0 + k), pt(y + 1));
    doc.stroke();
  }
  doc.restore();
  doc.end();
  await done;
}
