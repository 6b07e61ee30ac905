/**
 * Printing calls beyond renderer/lib/api.ts, shared by the batch "Print labels" screen and a
 * node's "Print label" tab: printer profiles, a label print (node or batch) as SVG pages and PDF,
 * a layout's calibration page. PDFs are fetched with the session's key into a Blob; the filename
 * comes from Content-Disposition.
 */
import { z } from 'zod';
import { CreatePrinterBody, Printer } from '../../server/schemas/printing.ts';
import { ApiError, send } from './api.ts';
import { filenameFrom } from './filename.ts';

export type PrinterT = z.infer<typeof Printer>;
export type CreatePrinterInput = z.input<typeof CreatePrinterBody>;

/** What the print options form produces (the query of label.svg / label.pdf / preview.svg / manifest?format=pdf). */
export interface LabelOptions {
  layout: string;
  caption: 'serial' | 'slug' | 'label' | 'none';
  cut_marks: boolean;
  start: number;
  printer?: string | undefined;
  offset_x?: number | undefined;
  offset_y?: number | undefined;
  /** `plain`: black square modules on white, no logo or frame, whatever the organization's QR code style. */
  code_style?: 'organization' | 'plain' | undefined;
}

/** The organization's style is what the server applies by default; plain overrides each of its options. */
const PLAIN_CODE = { fg: '000000', bg: 'FFFFFF', style: 'square', logo: false, frame: false } as const;

export interface PdfFile {
  blob: Blob;
  filename: string;
  pages: number;
}

export interface SvgPage {
  svg: Blob;
  pages: number;
}

const enc = encodeURIComponent;

function query(o: LabelOptions): Record<string, string | number | boolean | undefined> {
  const { code_style, ...rest } = o;
  return { ...rest, cut_marks: o.cut_marks ? true : undefined, start: o.start || undefined, ...(code_style === 'plain' ? PLAIN_CODE : {}) };
}

async function pdf(path: string, q: Record<string, string | number | boolean | undefined>, fallback: string): Promise<PdfFile> {
  const res = await send('GET', path, { query: q });
  return {
    blob: await res.blob(),
    filename: filenameFrom(res.headers.get('content-disposition'), fallback),
    pages: Number(res.headers.get('x-page-count')) || 1,
  };
}

async function svg(path: string, q: Record<string, string | number | boolean | undefined>): Promise<SvgPage> {
  const res = await send('GET', path, { query: q });
  return { svg: await res.blob(), pages: Number(res.headers.get('x-page-count')) || 1 };
}

export const printingApi = {
  printers: async (): Promise<PrinterT[]> => {
    const res = await send('GET', '/printers');
    const body = (await res.json()) as { data?: unknown };
    const parsed = z.array(Printer).safeParse(body.data);
    if (!parsed.success) throw new ApiError(0, 'Unexpected response from the server (GET /printers).');
    return parsed.data;
  },
  createPrinter: async (input: CreatePrinterInput): Promise<PrinterT> => {
    const res = await send('POST', '/printers', { body: input });
    const body = (await res.json()) as { data?: unknown };
    const parsed = Printer.safeParse(body.data);
    if (!parsed.success) throw new ApiError(0, 'Unexpected response from the server (POST /printers).');
    return parsed.data;
  },
  /** One page of a node's label print as SVG and how many pages there are. */
  nodeLabelSvg: (slug: string, o: LabelOptions, page = 1) => svg(`/nodes/${enc(slug)}/label.svg`, { ...query(o), page }),
  /** `test`: a test print on a loopback scan base (allow_local_scan_base). */
  nodeLabelPdf: (slug: string, o: LabelOptions, test = false) => pdf(`/nodes/${enc(slug)}/label.pdf`, { ...query(o), allow_local_scan_base: test || undefined }, `${slug}-label.pdf`),
  /** One page of a batch's label sheets as SVG and how many pages there are. */
  batchSvg: (batchId: string, o: LabelOptions, page = 1) => svg(`/batches/${enc(batchId)}/preview.svg`, { ...query(o), page }),
  batchPdf: (batchId: string, o: LabelOptions, test = false) =>
    pdf(`/batches/${enc(batchId)}/manifest`, { format: 'pdf', ...query(o), allow_local_scan_base: test || undefined }, `${batchId}-labels.pdf`),
  calibrationPdf: (layout: string, o: Pick<LabelOptions, 'printer' | 'offset_x' | 'offset_y'>) =>
    pdf(`/layouts/${enc(layout)}/calibration.pdf`, { printer: o.printer, offset_x: o.offset_x, offset_y: o.offset_y }, `${layout}-calibration.pdf`),
};
