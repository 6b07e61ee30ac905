import type { Request, Response } from 'express';
import { z } from 'zod';
import { type HeaderDoc, defineRoute } from '../../http/route.ts';
import { parseOrThrow } from '../../platform/validation.ts';
import { SlugParams } from '../../schemas/nodes.ts';
import { Deleted } from '../../schemas/common.ts';
import { CalibrationQuery, CreatePrinterBody, LabelPdfQuery, LayoutInfo, ListPrintersQuery, ManifestPdfQuery, PreviewQuery, Printer, UpdatePrinterBody } from '../../schemas/printing.ts';
import type { PreparedPdf, PrintService } from './service.ts';

export const PDF_CONTENT = { 'application/pdf': { schema: z.string().meta({ description: 'A PDF document' }) } };

const whole = z.string().regex(/^[0-9]+$/);
/** The headers of a print (PDF or SVG preview); `required: false` where the same status may also answer JSON or CSV. */
export function printHeaders(required = true): Record<string, HeaderDoc> {
  return {
    'X-Label-Count': { description: 'Labels in the print', schema: whole, required },
    'X-Page-Count': { description: 'Pages in the print', schema: whole, required },
  };
}
const pdfHeaders = { ...printHeaders(), 'Content-Disposition': { description: 'inline; filename="…pdf"', schema: z.string() } };

/** Sends a prepared PDF; a client that goes away mid-stream is not a server error. */
async function sendPdf(res: Response, pdf: PreparedPdf, stream: boolean): Promise<undefined> {
  res.status(200);
  res.type('application/pdf');
  res.setHeader('Content-Disposition', `inline; filename="${pdf.filename}"`);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Label-Count', String(pdf.labels));
  res.setHeader('X-Page-Count', String(pdf.pages));
  if (!stream) {
    res.send(await pdf.buffer());
    return undefined;
  }
  try {
    await pdf.write(res);
  } catch (err) {
    if (res.destroyed || (err as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE') return undefined;
    throw err;
  }
  return undefined;
}

export const SVG_CONTENT = { 'image/svg+xml': { schema: z.string().meta({ description: 'An SVG image, 1 unit = 1 mm' }) } };

/** One page of a print as SVG, for previews (the console shows it in an <img>). */
function sendPreview(res: Response, pdf: PreparedPdf, page: number): undefined {
  const svg = pdf.previewSvg(page);
  res.status(200);
  res.type('image/svg+xml');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Security-Policy', "default-src 'none'");
  res.setHeader('X-Label-Count', String(pdf.labels));
  res.setHeader('X-Page-Count', String(pdf.pages));
  res.send(svg);
  return undefined;
}

/**
 * `GET /batches/{id}/manifest?format=pdf&…`: called by the batch manifest route for format=pdf
 * (the JSON and CSV forms stay there). Re-reads the query strictly: an unknown or bad print
 * option is a 422 with details.
 */
export async function sendManifestPdf(print: PrintService, ctx: { req: Request; res: Response; orgId: string; batchId: string }): Promise<undefined> {
  const options = parseOrThrow(ManifestPdfQuery, { ...ctx.req.query });
  const pdf = await print.batchPdf(ctx.orgId, ctx.batchId, options, options.allow_local_scan_base);
  return sendPdf(ctx.res, pdf, true);
}

/** The print options of the manifest route, all optional, for its OpenAPI description. */
export const ManifestPrintQueryDoc = LabelPdfQuery.partial();

const PrinterParams = z.object({ id: z.string() });

/** A print whose QR style has colours a reader may fail on (or a malformed URL, as on every route with a path). */
const UNREADABLE_COLOURS = {
  description: 'Colours a reader may fail on (contrast under 4.5:1, or light modules on a dark background; the message names both colours and the ratio), or a malformed request URL',
};

export function printingRoutes(print: PrintService) {
  return [
    defineRoute({
      method: 'get',
      path: '/layouts',
      operationId: 'listLayouts',
      summary: 'Label layouts for printing (sheets and roll labels, in mm)',
      tags: ['Printing'],
      query: z.strictObject({}),
      responses: { 200: { description: 'Layouts', schema: LayoutInfo, list: true } },
      handler: () => {
        const layouts = print.listLayouts();
        return { data: layouts, total: layouts.length };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/layouts/{id}/calibration.pdf',
      operationId: 'getCalibrationPdf',
      summary: 'A calibration page for a layout: label outlines and centre crosses, to measure printer offsets',
      tags: ['Printing'],
      params: z.object({ id: z.string() }),
      query: CalibrationQuery,
      responses: { 200: { description: 'The calibration page', content: PDF_CONTENT, headers: pdfHeaders }, 404: { description: 'Not found (unknown layout)' } },
      handler: async ({ params, query, auth, res }) => sendPdf(res, await print.calibrationPdf(auth.orgId, params.id, query), false),
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/label.pdf',
      operationId: 'getNodeLabelPdf',
      summary: "One node's label as a PDF (vector QR code of its upper-case scan URL)",
      tags: ['Printing'],
      params: SlugParams,
      query: LabelPdfQuery,
      responses: {
        200: { description: 'The label', content: PDF_CONTENT, headers: pdfHeaders },
        400: UNREADABLE_COLOURS,
        404: { description: 'Node not found' },
        409: { description: 'The scan base is loopback: set a scan domain, or allow_local_scan_base=true for a test print' },
      },
      handler: async ({ params, query, auth, res }) => sendPdf(res, await print.nodePdf(auth.orgId, params.slug, query, query.allow_local_scan_base), false),
    }),
    defineRoute({
      method: 'get',
      path: '/batches/{id}/preview.svg',
      operationId: 'getBatchPreviewSvg',
      summary: "Preview one page of a batch's label sheets as SVG (same options as ?format=pdf, plus page)",
      tags: ['Printing'],
      params: PrinterParams,
      query: PreviewQuery,
      responses: {
        200: { description: 'The page', content: SVG_CONTENT, headers: printHeaders() },
        404: { description: 'Batch not found' },
        400: UNREADABLE_COLOURS,
        409: { description: 'Manifest not ready' },
      },
      // A preview is never printed: it shows the codes whatever the scan base.
      handler: async ({ params, query, auth, res }) => sendPreview(res, await print.batchPdf(auth.orgId, params.id, query, true), query.page),
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/label.svg',
      operationId: 'getNodeLabelSvg',
      summary: "Preview a node's label (on its sheet) as SVG",
      tags: ['Printing'],
      params: SlugParams,
      query: PreviewQuery,
      responses: { 200: { description: 'The page', content: SVG_CONTENT, headers: printHeaders() }, 400: UNREADABLE_COLOURS, 404: { description: 'Node not found' } },
      handler: async ({ params, query, auth, res }) => sendPreview(res, await print.nodePdf(auth.orgId, params.slug, query, true), query.page),
    }),
    defineRoute({
      method: 'post',
      path: '/printers',
      operationId: 'createPrinter',
      summary: 'Save a printer profile (its calibration offsets and usual layout)',
      tags: ['Printing'],
      body: CreatePrinterBody,
      responses: { 201: { description: 'Created', schema: Printer } },
      handler: async ({ body, auth }) => ({ status: 201, data: print.toApiPrinter(await print.createPrinter(auth.orgId, body)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/printers',
      operationId: 'listPrinters',
      summary: 'List printer profiles (newest first)',
      tags: ['Printing'],
      query: ListPrintersQuery,
      responses: { 200: { description: 'Printer profiles', schema: Printer, list: true } },
      handler: async ({ query, auth }) => {
        const { rows, total } = await print.listPrinters(auth.orgId, query.limit, query.offset);
        return { data: rows.map((r) => print.toApiPrinter(r)), total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/printers/{id}',
      operationId: 'getPrinter',
      summary: 'Get a printer profile',
      tags: ['Printing'],
      params: PrinterParams,
      responses: { 200: { description: 'The printer profile', schema: Printer }, 404: { description: 'Not found' } },
      handler: async ({ params, auth }) => ({ data: print.toApiPrinter(await print.getPrinter(auth.orgId, params.id)) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/printers/{id}',
      operationId: 'updatePrinter',
      summary: 'Update a printer profile (e.g. after calibrating)',
      tags: ['Printing'],
      params: PrinterParams,
      body: UpdatePrinterBody,
      responses: { 200: { description: 'Updated', schema: Printer }, 404: { description: 'Not found' } },
      handler: async ({ params, body, auth }) => ({ data: print.toApiPrinter(await print.updatePrinter(auth.orgId, params.id, body)) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/printers/{id}',
      operationId: 'deletePrinter',
      summary: 'Delete a printer profile',
      tags: ['Printing'],
      params: PrinterParams,
      responses: { 200: { description: 'Deleted', schema: Deleted.extend({ id: z.string() }) }, 404: { description: 'Not found' } },
      handler: async ({ params, auth }) => {
        await print.removePrinter(auth.orgId, params.id);
        return { data: { deleted: true, id: params.id } };
      },
    }),
  ];
}
