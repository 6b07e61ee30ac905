/**
 * Printing calls for the single-label and calibration screens (beyond renderer/lib/api.ts):
 * printer profiles, a node's label as SVG/PDF, a layout's calibration page. PDFs are fetched
 * with the session's key into a Blob; the filename comes from Content-Disposition.
 */
import { z } from 'zod';
import { CreatePrinterBody, Printer } from '../../../server/schemas/printing.ts';
import { ApiError, send } from '../../lib/api.ts';
import { filenameFrom } from './filename.ts';

export type PrinterT = z.infer<typeof Printer>;
export type CreatePrinterInput = z.input<typeof CreatePrinterBody>;

/** What the label options form produces (the query of label.svg / label.pdf / manifest?format=pdf). */
export interface LabelOptions {
  layout: string;
  caption: 'serial' | 'slug' | 'label' | 'none';
  cut_marks: boolean;
  start: number;
  printer?: string | undefined;
  offset_x?: number | undefined;
  offset_y?: number | undefined;
}

export { filenameFrom };

export interface PdfFile {
  blob: Blob;
  filename: string;
  pages: number;
}

const enc = encodeURIComponent;

function query(o: LabelOptions): Record<string, string | number | boolean | undefined> {
  return { ...o, cut_marks: o.cut_marks ? true : undefined, start: o.start || undefined };
}

async function pdf(path: string, q: Record<string, string | number | boolean | undefined>, fallback: string): Promise<PdfFile> {
  const res = await send('GET', path, { query: q });
  return {
    blob: await res.blob(),
    filename: filenameFrom(res.headers.get('content-disposition'), fallback),
    pages: Number(res.headers.get('x-page-count')) || 1,
  };
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
  nodeLabelSvg: async (slug: string, o: LabelOptions, page = 1): Promise<{ svg: Blob; pages: number }> => {
    const res = await send('GET', `/nodes/${enc(slug)}/label.svg`, { query: { ...query(o), page } });
    return { svg: await res.blob(), pages: Number(res.headers.get('x-page-count')) || 1 };
  },
  nodeLabelPdf: (slug: string, o: LabelOptions) => pdf(`/nodes/${enc(slug)}/label.pdf`, query(o), `${slug}-label.pdf`),
  batchPdf: (batchId: string, o: LabelOptions) => pdf(`/batches/${enc(batchId)}/manifest`, { format: 'pdf', ...query(o) }, `${batchId}-labels.pdf`),
  calibrationPdf: (layout: string, o: Pick<LabelOptions, 'printer' | 'offset_x' | 'offset_y'>) =>
    pdf(`/layouts/${enc(layout)}/calibration.pdf`, { printer: o.printer, offset_x: o.offset_x, offset_y: o.offset_y }, `${layout}-calibration.pdf`),
};
