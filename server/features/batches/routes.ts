import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { toCsv } from '../../platform/csv.ts';
import { Batch, CreateBatchBody, ListBatchesQuery, Manifest, ManifestQuery, UpdateBatchBody } from '../../schemas/batches.ts';
import { IdParams } from '../../schemas/templates.ts';
import { ManifestPrintQueryDoc, PDF_CONTENT, sendManifestPdf } from '../printing/routes.ts';
import type { PrintService } from '../printing/service.ts';
import type { BatchGenerator } from './generator.ts';
import type { BatchService } from './service.ts';

const MANIFEST_COLUMNS = ['serial', 'slug', 'url', 'id', 'status', 'hardware_id'] as const;

export function batchRoutes(batches: BatchService, generator: BatchGenerator, print?: PrintService) {
  return [
    defineRoute({
      method: 'post',
      path: '/batches',
      summary: 'Create a batch of up to 500 nodes (generated asynchronously)',
      tags: ['Batches'],
      budget: 'batch',
      body: CreateBatchBody,
      responses: { 201: { description: 'Accepted; status is generating', schema: Batch } },
      handler: ({ body, auth, apiBase }) => {
        const batch = batches.create(auth.orgId, body);
        generator.kick();
        return { status: 201, data: batches.toApi(batch, apiBase) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/batches',
      summary: 'List batches',
      tags: ['Batches'],
      query: ListBatchesQuery,
      responses: { 200: { description: 'Batches', schema: Batch, list: true } },
      handler: ({ query, auth, apiBase }) => {
        const { rows, total } = batches.list(auth.orgId, query.status, query.limit, query.offset);
        return { data: rows.map((b) => batches.toApi(b, apiBase)), total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/batches/{id}',
      summary: 'Get a batch (poll this for generation progress)',
      tags: ['Batches'],
      params: IdParams,
      responses: { 200: { description: 'The batch', schema: Batch }, 404: { description: 'Batch not found' } },
      handler: ({ params, auth, apiBase }) => ({ data: batches.toApi(batches.get(auth.orgId, params.id), apiBase) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/batches/{id}',
      summary: 'Rename a batch or move it to writing / deployed',
      tags: ['Batches'],
      params: IdParams,
      body: UpdateBatchBody,
      responses: {
        200: { description: 'Updated', schema: Batch },
        404: { description: 'Batch not found' },
        409: { description: 'Illegal status transition' },
      },
      handler: ({ params, body, auth, apiBase }) => ({ data: batches.toApi(batches.update(auth.orgId, params.id, body), apiBase) }),
    }),
    defineRoute({
      method: 'post',
      path: '/batches/{id}/retry',
      summary: 'Retry a failed batch (resumes generation)',
      tags: ['Batches'],
      budget: 'batch',
      params: IdParams,
      responses: { 200: { description: 'Generating again', schema: Batch }, 409: { description: 'Batch is not failed' } },
      handler: ({ params, auth, apiBase }) => {
        const batch = batches.retry(auth.orgId, params.id);
        generator.kick();
        return { data: batches.toApi(batch, apiBase) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/batches/{id}/manifest',
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
        },
        409: { description: 'Manifest not ready' },
      },
      handler: ({ params, query, auth, req, res, apiBase }) => {
        if (query.format === 'pdf' && print) return sendManifestPdf(print, { req, res, orgId: auth.orgId, batchId: params.id });
        const { batch, nodes } = batches.manifest(auth.orgId, params.id);
        if (query.format === 'csv') {
          res
            .status(200)
            .type('text/csv; charset=utf-8')
            .setHeader('Content-Disposition', `attachment; filename="${batch.prefix}-manifest.csv"`)
            .send(toCsv(MANIFEST_COLUMNS, nodes.map((n) => MANIFEST_COLUMNS.map((c) => n[c]))));
          return undefined;
        }
        return { data: { batch: batches.toApi(batch, apiBase), nodes } };
      },
    }),
  ];
}
