import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { NotFoundError, ValidationError } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { type Caption, DEFAULT_LAYOUT_ID, type LabelLayoutT, type LayoutInfoT, type PrintOptions, type PrintQuery, type PrinterT } from '../../schemas/printing.ts';
import type { BatchService } from '../batches/index.ts';
import { type NodeService, scanUrl } from '../nodes/index.ts';
import { assertPermanentScanBase } from '../organization/index.ts';
import { layoutInfo, loadLayouts } from './layouts.ts';
import { type LabelItem, type PdfJob, labelsPdfBuffer, planLabels, writeCalibrationPdf, writeLabelsPdf } from './pdf.ts';
import { CAPTION_FONT_FILE } from './captionFont.ts';
import { printableUrl } from './qr.ts';
import type { PrinterRow, PrintersRepo } from './repo.ts';
import type { QrStyleService, ResolvedQrStyle } from './qrStyleService.ts';
import { renderPageSvg } from './svg.ts';

export { CAPTION_FONT_FILE } from './captionFont.ts';

export interface PrintServiceDeps {
  store: Store;
  clock: Clock;
  batches: BatchService;
  nodes: NodeService;
  printers: PrintersRepo;
  layouts: readonly LabelLayoutT[];
  /** TTF bytes of the caption font (embedded, subset, in every PDF). */
  font: Buffer;
  qrStyles: QrStyleService;
}

/** Reads the shipped layouts and caption font from a resources directory (at startup). */
export function loadPrintResources(resourcesDir: string): { layouts: LabelLayoutT[]; font: Buffer; fontFile: string } {
  const fontFile = join(resourcesDir, 'fonts', CAPTION_FONT_FILE);
  return { layouts: loadLayouts(join(resourcesDir, 'layouts')), font: readFileSync(fontFile), fontFile };
}

/** A checked print job: refused jobs throw before a byte of the response is written. */
export interface PreparedPdf {
  filename: string;
  labels: number;
  pages: number;
  write(out: Writable): Promise<void>;
  buffer(): Promise<Buffer>;
  /** Page `page` (1-based) as an SVG preview; 422 when there is no such page. */
  previewSvg(page: number): string;
}

interface Source {
  url: string;
  slug: string;
  serial: string | null;
  label: string;
}

function captionOf(source: Source, caption: Caption): string {
  switch (caption) {
    case 'serial':
      return source.serial ?? source.slug;
    case 'slug':
      return source.slug;
    case 'label':
      return source.label;
    case 'none':
      return '';
  }
}

async function collect(write: (out: Writable) => Promise<void>): Promise<Buffer> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  await write(sink);
  return Buffer.concat(chunks);
}

function safeFilename(s: string): string {
  return s.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 80) || 'labels';
}

export class PrintService {
  private readonly deps: PrintServiceDeps;
  private readonly byId: Map<string, LabelLayoutT>;

  constructor(deps: PrintServiceDeps) {
    this.deps = deps;
    this.byId = new Map(deps.layouts.map((l) => [l.id, l]));
  }

  listLayouts(): LayoutInfoT[] {
    return this.deps.layouts.map(layoutInfo);
  }

  layout(id: string): LabelLayoutT {
    const layout = this.byId.get(id);
    if (!layout) throw new ValidationError({ layout: `unknown layout; one of: ${[...this.byId.keys()].join(', ')}` });
    return layout;
  }

  // ---- printer profiles -------------------------------------------------------------------

  toApiPrinter(row: PrinterRow): PrinterT {
    const { org_id: _org, ...rest } = row;
    return rest;
  }

  async createPrinter(orgId: string, input: { name: string; layout?: string | null | undefined; offset_x?: number | undefined; offset_y?: number | undefined }): Promise<PrinterRow> {
    if (input.layout) this.layout(input.layout);
    const now = new Date(this.deps.clock.now()).toISOString();
    const row: PrinterRow = {
      id: newId(),
      org_id: orgId,
      name: input.name,
      layout: input.layout ?? null,
      offset_x: input.offset_x ?? 0,
      offset_y: input.offset_y ?? 0,
      created_at: now,
      updated_at: now,
    };
    await this.deps.printers.insert(this.deps.store.db, row);
    return row;
  }

  async getPrinter(orgId: string, id: string, db: Executor = this.deps.store.db): Promise<PrinterRow> {
    const row = await this.deps.printers.get(db, orgId, id);
    if (!row) throw new NotFoundError();
    return row;
  }

  listPrinters(orgId: string, limit: number, offset: number) {
    return this.deps.printers.list(this.deps.store.db, orgId, limit, offset);
  }

  updatePrinter(orgId: string, id: string, input: { name?: string | undefined; layout?: string | null | undefined; offset_x?: number | undefined; offset_y?: number | undefined }): Promise<PrinterRow> {
    return this.deps.store.transaction(async (tx) => {
      const row = await this.getPrinter(orgId, id, tx);
      if (input.layout) this.layout(input.layout);
      const next: PrinterRow = {
        ...row,
        name: input.name ?? row.name,
        layout: input.layout === undefined ? row.layout : input.layout,
        offset_x: input.offset_x ?? row.offset_x,
        offset_y: input.offset_y ?? row.offset_y,
        updated_at: new Date(this.deps.clock.now()).toISOString(),
      };
      await this.deps.printers.update(tx, next);
      return next;
    });
  }

  async removePrinter(orgId: string, id: string): Promise<void> {
    if (!(await this.deps.printers.delete(this.deps.store.db, orgId, id))) throw new NotFoundError();
  }

  /** Fills what the request left out from the printer profile, then the defaults. */
  async resolve(orgId: string, query: PrintQuery): Promise<{ layout: LabelLayoutT; options: PrintOptions }> {
    let printer: PrinterRow | undefined;
    if (query.printer !== undefined) {
      printer = await this.deps.printers.get(this.deps.store.db, orgId, query.printer);
      if (!printer) throw new ValidationError({ printer: 'Printer not found' });
    }
    const options: PrintOptions = {
      layout: query.layout ?? printer?.layout ?? DEFAULT_LAYOUT_ID,
      caption: query.caption,
      cut_marks: query.cut_marks,
      offset_x: query.offset_x ?? printer?.offset_x ?? 0,
      offset_y: query.offset_y ?? printer?.offset_y ?? 0,
      start: query.start,
    };
    return { layout: this.layout(options.layout), options };
  }

  // ---- PDFs ---------------------------------------------------------------------------------

  /**
   * The print sheet of a batch, in serial order (404 unknown batch, 409 manifest not ready, 409
   * while the scan base is loopback unless `allowLocalScanBase`: labels are permanent).
   */
  async batchPdf(orgId: string, batchId: string, query: PrintQuery, allowLocalScanBase?: boolean): Promise<PreparedPdf> {
    const { layout, options } = await this.resolve(orgId, query);
    const { batch, nodes: rows } = await this.deps.batches.manifest(orgId, batchId);
    assertPermanentScanBase(await this.deps.nodes.scanBaseOf(orgId), allowLocalScanBase, 'labels');
    const labels = new Map<string, string>();
    if (options.caption === 'label') {
      const { rows: nodes } = await this.deps.nodes.list(orgId, { batch_id: batch.id, limit: Math.max(1, batch.quantity), offset: 0 });
      for (const n of nodes) labels.set(n.id, n.label);
    }
    const sources: Source[] = rows.map((r) => ({ url: r.url, slug: r.slug, serial: r.serial || null, label: labels.get(r.id) ?? r.serial }));
    if (sources.length === 0) throw new ValidationError({ id: 'the batch has no nodes left to print' });
    const style = await this.deps.qrStyles.resolve(orgId, query);
    return this.prepare(layout, sources, options, style, `Waymark labels — batch ${batch.label} (${batch.prefix})`, `${safeFilename(batch.prefix)}-labels-${layout.id}.pdf`);
  }

  /** One node's label (404 unknown node; 409 while the scan base is loopback unless `allowLocalScanBase`). */
  async nodePdf(orgId: string, slug: string, query: PrintQuery, allowLocalScanBase?: boolean): Promise<PreparedPdf> {
    const { layout, options } = await this.resolve(orgId, query);
    const node = await this.deps.nodes.get(orgId, slug);
    const scanBase = await this.deps.nodes.scanBaseOf(orgId);
    assertPermanentScanBase(scanBase, allowLocalScanBase, 'labels');
    const source: Source = { url: scanUrl(scanBase, node.slug), slug: node.slug, serial: node.serial, label: node.label };
    const style = await this.deps.qrStyles.resolve(orgId, query);
    return this.prepare(layout, [source], options, style, `Waymark label — ${node.label} (${node.slug})`, `${node.slug}-label-${layout.id}.pdf`);
  }

  /** A calibration page for `layoutId`: label outlines and centre crosses, no codes. */
  async calibrationPdf(orgId: string, layoutId: string, query: { offset_x?: number | undefined; offset_y?: number | undefined; printer?: string | undefined }): Promise<PreparedPdf> {
    const layout = this.byId.get(layoutId);
    if (!layout) throw new NotFoundError();
    const { options } = await this.resolve(orgId, { ...query, layout: layout.id, caption: 'none', cut_marks: false, start: 0 });
    const job = { layout, offsetX: options.offset_x, offsetY: options.offset_y, createdAt: new Date(this.deps.clock.now()), font: this.deps.font };
    const write = (out: Writable) => writeCalibrationPdf(job, out);
    return {
      filename: `calibration-${layout.id}.pdf`,
      labels: 0,
      pages: 1,
      write,
      buffer: () => collect(write),
      previewSvg: () => {
        throw new ValidationError({ format: 'no preview for calibration pages' });
      },
    };
  }

  private prepare(layout: LabelLayoutT, sources: Source[], options: PrintOptions, style: ResolvedQrStyle, title: string, filename: string): PreparedPdf {
    const items: LabelItem[] = sources.map((s) => ({ text: printableUrl(s.url), caption: captionOf(s, options.caption) }));
    const job: PdfJob = {
      layout,
      items,
      captions: options.caption !== 'none',
      cutMarks: options.cut_marks,
      offsetX: options.offset_x,
      offsetY: options.offset_y,
      start: options.start,
      title,
      createdAt: new Date(this.deps.clock.now()),
      font: this.deps.font,
      style: style.style,
      logoPng: style.logoPng,
    };
    const plan = planLabels(job);
    const pages = plan[plan.length - 1]!.page + 1;
    return {
      filename,
      labels: plan.length,
      pages,
      write: (out) => writeLabelsPdf(job, out, plan),
      buffer: () => labelsPdfBuffer(job, plan),
      previewSvg: (page) => {
        if (page < 1 || page > pages) throw new ValidationError({ page: `must be between 1 and ${pages} (pages in this print)` });
        return renderPageSvg({ layout, plan, cutMarks: job.cutMarks, offsetX: job.offsetX, offsetY: job.offsetY, start: job.start, style: style.style, logoPng: style.logoPng }, page - 1);
      },
    };
  }
}
