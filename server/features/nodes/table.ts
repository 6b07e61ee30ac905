/**
 * Nodes as a table, for the import and the export: one row per node, the columns `slug`,
 * `serial`, `label`, `function_type`, `status`, `template_id`, the limits `expires_at`,
 * `max_scans`, `after_limit`, and `payload.<field>` for every payload field of every function
 * type. A payload field holding a list (`links`) and `after_limit` are one JSON cell, `max_scans`
 * a number; every other cell is text. An empty cell is a field left out. The import also reads
 * `password` (clear text, hashed on import), which the export never writes.
 */
import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import { BadRequestError, ValidationError } from '../../platform/errors.ts';
import { csvCell, csvRow, csvUnguard } from '../../platform/csv.ts';
import { FUNCTION_TYPES } from '../../schemas/common.ts';
import type { NodeExportRowT } from '../../schemas/nodeImport.ts';
import { payloadFields, payloadSchemas } from '../../schemas/payloads.ts';

const NODE_COLUMNS = ['slug', 'serial', 'label', 'function_type', 'status', 'template_id', 'expires_at', 'max_scans', 'after_limit'] as const;

/** Read by the import, never written by the export. */
const IMPORT_ONLY_COLUMNS = ['password'] as const;

/** Payload fields in schema order, each once (first_name before email, …). */
const PAYLOAD_FIELDS = [...new Set(FUNCTION_TYPES.flatMap((type) => payloadFields[type]))];

/** Fields whose value is a list or an object in some payload: their cells hold JSON. */
const JSON_FIELDS = new Set(
  FUNCTION_TYPES.flatMap((type) =>
    Object.entries(payloadSchemas[type].shape as Record<string, z.ZodType>)
      .filter(([, schema]) => {
        const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
        return inner instanceof z.ZodArray || inner instanceof z.ZodObject;
      })
      .map(([field]) => field),
  ),
);

export const TABLE_COLUMNS: readonly string[] = [...NODE_COLUMNS, ...PAYLOAD_FIELDS.map((f) => `payload.${f}`)];

/** The CSV header line of an export. */
export function csvHeader(): string {
  return csvRow(TABLE_COLUMNS);
}

/** One exported node as a CSV line, in TABLE_COLUMNS order. */
export function csvLine(row: NodeExportRowT): string {
  const cells: unknown[] = NODE_COLUMNS.map((c) => (c === 'after_limit' && row.after_limit !== null ? JSON.stringify(row.after_limit) : row[c]));
  for (const field of PAYLOAD_FIELDS) {
    const value = row.payload[field];
    cells.push(value === undefined ? null : JSON_FIELDS.has(field) || typeof value !== 'string' ? JSON.stringify(value) : value);
  }
  // csvCell writes an empty string as an empty cell, which reads back as a field left out.
  return `${cells.map((c) => (c === '' ? '""' : csvCell(c))).join(',')}\r\n`;
}

/**
 * A CSV body as the rows the JSON form of the import carries. A malformed file (an unclosed
 * quote, a line with more or fewer cells than the header) is a 400; an unknown column a 422.
 */
export function rowsFromCsv(text: string): Array<Record<string, unknown>> {
  let records: Array<Array<string | null>>;
  try {
    // An unquoted empty cell is null (left out), a quoted one an empty string. Blank lines and
    // lines of empty cells (a spreadsheet's trailing `,,,,`) are no rows.
    records = parse(text, { bom: true, skip_empty_lines: true, skip_records_with_empty_values: true, cast: (value, context) => (value === '' && !context.quoting ? null : value) }) as Array<Array<string | null>>;
  } catch (err) {
    throw new BadRequestError(`Malformed CSV: ${(err as Error).message}`);
  }
  const [header, ...lines] = records;
  if (!header) throw new ValidationError({ header: 'The CSV is empty: its first line names the columns (GET /v1/nodes/export writes them)' });
  const columns = header.map((c) => (c ?? '').trim());
  const known = new Set([...TABLE_COLUMNS, ...IMPORT_ONLY_COLUMNS]);
  const details: Record<string, string> = {};
  const seen = new Set<string>();
  for (const column of columns) {
    if (!known.has(column)) details[`header.${column}`] = 'is not a known column';
    else if (seen.has(column)) details[`header.${column}`] = 'appears twice';
    seen.add(column);
  }
  if (Object.keys(details).length > 0) throw new ValidationError(details);
  return lines.map((cells) => {
    const row: Record<string, unknown> = {};
    const payload: Record<string, unknown> = {};
    columns.forEach((column, i) => {
      const raw = cells[i];
      if (raw === null || raw === undefined) return;
      const cell = csvUnguard(raw);
      if (!column.startsWith('payload.')) {
        row[column] = column === 'after_limit' ? parseJsonCell(cell) : column === 'max_scans' && /^[0-9]+$/.test(cell) ? Number(cell) : cell;
        return;
      }
      const field = column.slice('payload.'.length);
      payload[field] = JSON_FIELDS.has(field) ? parseJsonCell(cell) : cell;
    });
    if (Object.keys(payload).length > 0) row.payload = payload;
    return row;
  });
}

/** A JSON cell's value; text that is not JSON stays text, and the payload's schema names the field. */
function parseJsonCell(cell: string): unknown {
  try {
    return JSON.parse(cell) as unknown;
  } catch {
    return cell;
  }
}
