import type { Request, Response } from 'express';
import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { parseOrThrow } from '../../platform/validation.ts';
import { SlugParams } from '../../schemas/nodes.ts';
import { CalibrationQuery, LabelPdfQuery, LayoutInfo, ManifestPdfQuery } from '../../schemas/printing.ts';
import type { PreparedPdf, PrintService } from './service.ts';

export const PDF_CONTENT = { 'application/pdf': { schema: z.string().meta({ description: 'A PDF document' }) } };

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

/**
 * `GET /batches/{id}/manifest?format=pdf&…`: called by the batch manifest route for format=pdf
 * (the JSON and CSV forms stay there). Re-reads the query strictly: an unknown or bad print
 * option is a 422 with details.
 */
export async function sendManifestPdf(print: PrintService, ctx: { req: Request; res: Response; orgId: string; batchId: string }): Promise<undefined> {
  const options = parseOrThrow(ManifestPdfQuery, { ...ctx.req.query });
  const pdf = print.batchPdf(ctx.orgId, ctx.batchId, options);
  return sendPdf(ctx.res, pdf, true);
}

/** The print options of the manifest route, all optional, for its OpenAPI description. */
export const ManifestPrintQueryDoc = LabelPdfQuery.partial();

export function printingRoutes(print: PrintService) {
  return [
    defineRoute({
      method: 'get',
      path: '/layouts',
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
      summary: 'A calibration page for a layout: label outlines and centre crosses, to measure printer offsets',
      tags: ['Printing'],
      params: z.object({ id: z.string() }),
      query: CalibrationQuery,
      responses: { 200: { description: 'The calibration page', content: PDF_CONTENT } },
      handler: ({ params, query, res }) => sendPdf(res, print.calibrationPdf(params.id, query), false),
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/label.pdf',
      summary: "One node's label as a PDF (vector QR code of its upper-case scan URL)",
      tags: ['Printing'],
      params: SlugParams,
      query: LabelPdfQuery,
      responses: {
        200: { description: 'The label', content: PDF_CONTENT },
        404: { description: 'Node not found' },
      },
      handler: ({ params, query, auth, res }) => sendPdf(res, print.nodePdf(auth.orgId, params.slug, query), false),
    }),
  ];
}
