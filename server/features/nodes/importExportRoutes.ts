import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { ExportNodesQuery, IMPORT_MAX_ROWS, ImportNodesBody, ImportNodesQuery, ImportNodesRequest, ImportReport, NodesExport } from '../../schemas/nodeImport.ts';
import { exportRow, type NodeImporter } from './import.ts';
import type { NodeService } from './service.ts';
import { csvHeader, csvLine, rowsFromCsv, TABLE_COLUMNS } from './table.ts';

/** Nodes read per page while exporting: the memory an export holds, whatever the node count. */
const EXPORT_PAGE = 500;

/**
 * Bulk import and export of an organization's nodes. Mounted before nodeRoutes, so that
 * `/nodes/export` is not taken for the node with slug "export".
 */
export function importExportRoutes(nodes: NodeService, importer: NodeImporter) {
  return [
    defineRoute({
      method: 'post',
      path: '/nodes/import',
      operationId: 'importNodes',
      summary: `Create or update up to ${IMPORT_MAX_ROWS} nodes from CSV or JSON rows (a row naming a slug or serial updates that node)`,
      tags: ['Nodes'],
      budget: 'batch',
      bodyLimit: '8mb',
      body: ImportNodesBody,
      bodyDoc: ImportNodesRequest,
      bodyExample: { nodes: [{ label: 'Front door', function_type: 'redirect', payload: { url: 'https://example.com/menu' } }, { slug: 'Z8QDXM0N', status: 'paused' }] },
      textBodies: {
        'text/csv': {
          description: `A header line naming the columns (${TABLE_COLUMNS.join(', ')}, and password, import only; any subset, in any order), then one line per row. An empty cell is a field left out, \`""\` an empty string; \`payload.links\` and \`after_limit\` hold JSON; a leading apostrophe before = + - @ is dropped (the export adds it against spreadsheet formulas).`,
          parse: (text) => ({ nodes: rowsFromCsv(text) }),
        },
      },
      query: ImportNodesQuery,
      responses: {
        200: {
          description: 'The report: what each row did (with ?dry_run=true, would do), and the errors of the rows that failed (only under ?mode=partial or ?dry_run=true: otherwise a failed row makes it a 422)',
          schema: ImportReport,
          example: {
            data: {
              mode: 'partial',
              dry_run: false,
              created: 1,
              updated: 0,
              unchanged: 0,
              failed: 1,
              errors: [{ row: 2, field: 'payload.url', message: 'must be an http or https URL' }],
              rows: [
                { row: 1, action: 'created', slug: 'Z8QDXM0N' },
                { row: 2, action: 'failed', slug: null },
              ],
            },
          },
        },
        409: { description: "No slugs left in this site's reserve (a paired site that has not reached its remote): nothing was written" },
        422: { description: 'A row is invalid (without ?mode=partial: nothing was written), with `details` keyed `rows.<row>.<field>`; or the body is (no rows, too many, an unknown CSV column)' },
      },
      handler: async ({ body, query, auth }) => ({
        data: await importer.run(auth.orgId, body.nodes, { mode: query.mode ?? 'all', dryRun: query.dry_run }),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/nodes/export',
      operationId: 'exportNodes',
      summary: "Every node of the organization as CSV (default) or JSON, streamed, in the columns the import reads",
      tags: ['Nodes'],
      query: ExportNodesQuery,
      responses: {
        200: {
          description: 'The nodes, oldest first: `{"nodes": [...]}` (JSON) or a header line and one line per node (CSV)',
          content: {
            'application/json': { schema: NodesExport },
            'text/csv': { schema: z.string() },
          },
          headers: { 'Content-Disposition': { description: 'attachment; filename="nodes.csv" (or nodes.json)', schema: z.string() } },
        },
      },
      handler: async ({ query, auth, res }) => {
        const format = query.format ?? 'csv';
        const pages = nodes.pages(auth.orgId, EXPORT_PAGE);
        // Written as read, a page at a time and no faster than the client reads (Readable.from
        // pulls the next page only when the response wants more): constant memory for any size.
        async function* body() {
          yield format === 'csv' ? csvHeader() : '{"nodes":[';
          let first = true;
          for await (const page of pages) {
            if (format === 'csv') yield page.map((n) => csvLine(exportRow(n))).join('');
            else {
              yield (first ? '' : ',') + page.map((n) => JSON.stringify(exportRow(n))).join(',');
              first = false;
            }
            await nextTurn();
          }
          if (format === 'json') yield ']}';
        }
        res
          .status(200)
          .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8')
          .setHeader('Content-Disposition', `attachment; filename="nodes.${format}"`);
        try {
          await pipeline(Readable.from(body()), res);
        } catch (err) {
          // The client went away: nothing to answer. Anything else is a server error.
          if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') throw err;
        }
        return undefined;
      },
    }),
  ];
}
