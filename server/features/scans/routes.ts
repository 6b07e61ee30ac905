import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { csvRow } from '../../platform/csv.ts';
import { SlugParams } from '../../schemas/nodes.ts';
import { AnalyticsQuery, NodeAnalytics, OrgAnalytics, OrgAnalyticsQuery, QrQuery, ScanEvent, ScansQuery } from '../../schemas/analytics.ts';
import type { NodeService } from '../nodes/service.ts';
import { SCAN_CSV_HEADER, toApiScan, type ScanAnalytics } from './analytics.ts';
import { printedScanUrl, qrFile } from './qr.ts';

export interface ScanRouteDeps {
  nodes: NodeService;
  analytics: ScanAnalytics;
  scanBase: string;
}

export function scanRoutes({ nodes, analytics, scanBase }: ScanRouteDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/analytics',
      summary: 'Scan analytics of a node: totals, unique visitors, time series and breakdowns (human scans only)',
      tags: ['Analytics'],
      params: SlugParams,
      query: AnalyticsQuery,
      responses: { 200: { description: 'Analytics', schema: NodeAnalytics }, 404: { description: 'Node not found' } },
      handler: ({ params, query, auth }) => {
        const node = nodes.get(auth.orgId, params.slug);
        return { data: analytics.forNode(node, query) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/analytics',
      summary: 'Organization-wide scan analytics with the top nodes (human scans only)',
      tags: ['Analytics'],
      query: OrgAnalyticsQuery,
      responses: { 200: { description: 'Analytics', schema: OrgAnalytics } },
      handler: ({ query, auth }) => ({ data: analytics.forOrg(auth.orgId, query) }),
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/scans',
      summary: 'Scan events of a node, newest first (JSON pages, or all of them as CSV with ?format=csv)',
      tags: ['Analytics'],
      params: SlugParams,
      query: ScansQuery,
      responses: {
        200: {
          description: 'Scans',
          content: {
            'application/json': { schema: z.object({ data: z.array(ScanEvent), total: z.number().int() }) },
            'text/csv': { schema: z.string() },
          },
        },
        404: { description: 'Node not found' },
      },
      handler: ({ params, query, auth, res }) => {
        const node = nodes.get(auth.orgId, params.slug);
        if (query.format === 'csv') {
          // Streamed row by row: a node may have millions of scans.
          const rows = analytics.iterateScans(node.id, query);
          res.status(200).type('text/csv; charset=utf-8').setHeader('Content-Disposition', `attachment; filename="${node.slug}-scans.csv"`);
          res.write(csvRow(SCAN_CSV_HEADER));
          let chunk = '';
          for (const row of rows) {
            const s = toApiScan(row);
            chunk += csvRow(SCAN_CSV_HEADER.map((c) => s[c]));
            if (chunk.length > 64 * 1024) {
              res.write(chunk);
              chunk = '';
            }
          }
          res.end(chunk);
          return undefined;
        }
        const { rows, total } = analytics.listScans(node.id, query);
        return { data: rows, total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/qr',
      summary: 'QR code of the node\'s scan URL (upper case, so that alphanumeric mode applies)',
      tags: ['Nodes'],
      params: SlugParams,
      query: QrQuery,
      responses: {
        200: { description: 'QR code', content: { 'image/svg+xml': { schema: z.string() }, 'image/png': { schema: z.string() } } },
        404: { description: 'Node not found' },
      },
      handler: async ({ params, query, auth, res }) => {
        const node = nodes.get(auth.orgId, params.slug);
        const format = query.format ?? 'svg';
        const file = await qrFile(printedScanUrl(scanBase, node.slug), { format, size: query.size, ecc: query.ecc ?? 'M', margin: query.margin });
        res
          .status(200)
          .type(file.contentType)
          .setHeader('Content-Disposition', `inline; filename="${node.slug}.${format}"`)
          .send(file.body);
        return undefined;
      },
    }),
  ];
}
