import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { csvRow } from '../../platform/csv.ts';
import { SlugParams } from '../../schemas/nodes.ts';
import { AnalyticsQuery, NodeAnalytics, OrgAnalytics, OrgAnalyticsQuery, QrQuery, ScanEvent, ScansQuery } from '../../schemas/analytics.ts';
import type { NodeService } from '../nodes/index.ts';
import type { QrStyleService } from '../printing/index.ts';
import type { RuleService } from '../rules/index.ts';
import { SCAN_CSV_HEADER, type ScanAnalytics } from './analytics.ts';
import { printedScanUrl } from './qr.ts';

export interface ScanRouteDeps {
  nodes: NodeService;
  rules: RuleService;
  analytics: ScanAnalytics;
  qrStyles: QrStyleService;
}

export function scanRoutes({ nodes, rules, analytics, qrStyles }: ScanRouteDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/analytics',
      operationId: 'getNodeAnalytics',
      summary: 'Scan analytics of a node: totals, unique visitors, time series, breakdowns and split-test variants (human scans only)',
      tags: ['Analytics'],
      params: SlugParams,
      query: AnalyticsQuery,
      responses: { 200: { description: 'Analytics', schema: NodeAnalytics }, 404: { description: 'Node not found' } },
      handler: async ({ params, query, auth }) => {
        const node = await nodes.get(auth.orgId, params.slug);
        await analytics.caughtUp();
        const variants = (await rules.variants(auth.orgId, params.slug)).map(({ rule, share }) => ({ id: rule.id, weight: share, enabled: rule.enabled, function_type: rule.function_type, created_at: rule.created_at }));
        return { data: await analytics.forNode(node, query, { own_function_type: node.function_type, variants }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/analytics',
      operationId: 'getOrgAnalytics',
      summary: 'Organization-wide scan analytics with the top nodes (human scans only)',
      tags: ['Analytics'],
      query: OrgAnalyticsQuery,
      responses: { 200: { description: 'Analytics', schema: OrgAnalytics } },
      handler: async ({ query, auth }) => {
        await analytics.caughtUp();
        return { data: await analytics.forOrg(auth.orgId, query) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/scans',
      operationId: 'listNodeScans',
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
          headers: { 'Content-Disposition': { description: 'CSV only: attachment; filename="<slug>-scans.csv"', schema: z.string(), required: false } },
        },
        404: { description: 'Node not found' },
      },
      handler: async ({ params, query, auth, res }) => {
        const node = await nodes.get(auth.orgId, params.slug);
        await analytics.caughtUp();
        if (query.format === 'csv') {
          const pages = analytics.scanPages(node.id, query);
          res.status(200).type('text/csv; charset=utf-8').setHeader('Content-Disposition', `attachment; filename="${node.slug}-scans.csv"`);
          // A node may have millions of scans: a page at a time, the event loop free in between
          // (scans go on being answered), and no faster than the client reads (Readable.from
          // pulls the next page only when the response wants more).
          async function* csv() {
            yield csvRow(SCAN_CSV_HEADER);
            for await (const page of pages) {
              yield page.map((s) => csvRow(SCAN_CSV_HEADER.map((c) => s[c]))).join('');
              await nextTurn();
            }
          }
          try {
            await pipeline(Readable.from(csv()), res);
          } catch (err) {
            // The client went away: nothing to answer. Anything else is a server error.
            if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
          }
          return undefined;
        }
        const { rows, total } = await analytics.listScans(node.id, query);
        return { data: rows, total };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/{slug}/qr',
      operationId: 'getNodeQr',
      summary: "QR code of the node's scan URL (upper case, so that alphanumeric mode applies), in the organization's style or the one asked for",
      tags: ['Nodes'],
      params: SlugParams,
      query: QrQuery,
      responses: {
        200: {
          description: 'QR code',
          content: { 'image/svg+xml': { schema: z.string() }, 'image/png': { schema: z.string() } },
          headers: { 'Content-Disposition': { description: 'inline; filename="<slug>.svg|png"', schema: z.string() } },
        },
        400: { description: 'Colours a reader may fail on: contrast under 4.5:1, or light modules on a dark background (the message names both colours and the ratio); or a malformed request URL' },
        404: { description: 'Node not found' },
      },
      handler: async ({ params, query, auth, res }) => {
        const node = await nodes.get(auth.orgId, params.slug);
        const format = query.format ?? 'svg';
        const style = await qrStyles.resolve(auth.orgId, query);
        const file = qrStyles.renderFile(printedScanUrl(await nodes.scanBaseOf(auth.orgId), node.slug), style, { format, size: query.size, ecc: query.ecc ?? 'M', margin: query.margin });
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
