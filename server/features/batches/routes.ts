import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { toCsv } from '../../platform/csv.ts';
import { Batch, CreateBatchBody, CreateBatchRequest, ListBatchesQuery, Manifest, ManifestQuery, UpdateBatchBody } from '../../schemas/batches.ts';
import { IdParams } from '../../schemas/templates.ts';
import { ManifestPrintQueryDoc, PDF_CONTENT, type PrintService, printHeaders, sendManifestPdf } from '../printing/index.ts';
import type { BatchGenerator } from './generator.ts';
import type { BatchService } from './service.ts';

const MANIFEST_COLUMNS = ['serial', 'slug', 'url', 'id', 'status', 'hardware_id', 'tag_protection'] as const;

export function batchRoutes(batches: BatchService, generator: BatchGenerator, print?: PrintService) {
  return [
    defineRoute({
      method: 'post',
      path: '/batches',
      operationId: 'createBatch',
      summary: 'Create a batch of up to 500 nodes (generated asynchronously)',
      tags: ['Batches'],
      budget: 'batch',
      body: CreateBatchBody,
      bodyDoc: CreateBatchRequest,
      bodyExample: { label: 'Fair stands', prefix: 'FAIR', quantity: 50, function_type: 'redirect', base_payload: { url: 'https://example.com/fair' } },
      responses: {
        201: { description: 'Accepted; status is generating', schema: Batch },
        409: { description: "Not enough slugs left in this site's reserve for the quantity (a paired site that has not reached its remote)" },
      },
      handler: async ({ body, auth, apiBase }) => {
        const batch = await batches.create(auth.orgId, body);
        generator.kick();
        return { status: 201, data: await batches.toApi(batch, apiBase) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/batches',
      operationId: 'listBatches',
      summary: 'List batches',
      tags: ['Batches'],
      query: ListBatchesQuery,
      responses: { 200: { description: 'Batches', schema: Batch, list: true } },
      handler: async ({ query, auth, apiBase }) => {
        const { rows, total } = await batches.list(auth.orgId, query.status, query.limit, query.offset);
        return { data: await Promise.all(rows.map((b) => batches.toApi(b, apiBase))), total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/batches/{id}',
      operationId: 'getBatch',
      summary: 'Get a batch (poll this for generation progress)',
      tags: ['Batches'],
      params: IdParams,
      responses: { 200: { description: 'The batch', schema: Batch }, 404: { description: 'Batch not found' } },
      handler: async ({ params, auth, apiBase }) => ({ data: await batches.toApi(await batches.get(auth.orgId, params.id), apiBase) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/batches/{id}',
      operationId: 'updateBatch',
      summary: 'Rename a batch or move it to writing / deployed',
      tags: ['Batches'],
      params: IdParams,
      body: UpdateBatchBody,
      responses: {
        200: { description: 'Updated', schema: Batch },
        404: { description: 'Batch not found' },
        409: { description: 'Illegal status transition' },
      },
      handler: async ({ params, body, auth, apiBase }) => ({ data: await batches.toApi(await batches.update(auth.orgId, params.id, body), apiBase) }),
    }),
    defineRoute({
      method: 'post',
      path: '/batches/{id}/retry',
      operationId: 'retryBatch',
      summary: 'Retry a failed batch (resumes generation)',
      tags: ['Batches'],
      budget: 'batch',
      params: IdParams,
      responses: { 200: { description: 'Generating again', schema: Batch }, 404: { description: 'Batch not found' }, 409: { description: 'Batch is not failed' } },
      handler: async ({ params, auth, apiBase }) => {
        const batch = await batches.retry(auth.orgId, params.id);
        generator.kick();
        return { data: await batches.toApi(batch, apiBase) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/batches/{id}/manifest',
      operationId: 'getBatchManifest',
      summary: 'The batch manifest: JSON, CSV with ?format=csv, or a label sheet with ?format=pdf&layout=…',
      tags: ['Batches'],
      params: IdParams,
      query: ManifestQuery.extend(ManifestPrintQueryDoc.shape),
      responses: {
        200: {
          description: 'Manifest',
          content: {
            'application/json': { schema: z.object({ data: Manifest }) },
            'text/csv': { schema: z.string() },
            ...PDF_CONTENT,
          },
          headers: {
            ...printHeaders(false),
            'Content-Disposition': { description: 'CSV: attachment; filename="<prefix>-manifest.csv"; PDF: inline', schema: z.string(), required: false },
          },
        },
        404: { description: 'Batch not found' },
        409: { description: 'Manifest not ready; or, for format=pdf, the scan base is loopback (set a scan domain, or allow_local_scan_base=true)' },
      },
      handler: async ({ params, query, auth, req, res, apiBase }) => {
        if (query.format === 'pdf' && print) return sendManifestPdf(print, { req, res, orgId: auth.orgId, batchId: params.id });
        const { batch, nodes } = await batches.manifest(auth.orgId, params.id);
        if (query.format === 'csv') {
          res
            .status(200)
            .type('text/csv; charset=utf-8')
            .setHeader('Content-Disposition', `attachment; filename="${batch.prefix}-manifest.csv"`)
            .send(toCsv(MANIFEST_COLUMNS, nodes.map((n) => MANIFEST_COLUMNS.map((c) => n[c]))));
          return undefined;
        }
        return { data: { batch: await batches.toApi(batch, apiBase), nodes } };
      },
    }),
  ];
}
