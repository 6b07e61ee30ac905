import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvCell } from '../../platform/csv.ts';
import { csvHeader, csvLine, rowsFromCsv } from './table.ts';

describe('nodes as a CSV table', () => {
  it('reads back every text an export writes, exactly (formula guard, quotes, line breaks, empty strings)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string(), (label, message) => {
        const line = csvLine({ slug: 'Z8QDXM0N', serial: null, label, function_type: 'action', status: 'active', template_id: null, payload: { action_type: 'sms', message }, expires_at: null, max_scans: null, after_limit: null });
        const [row] = rowsFromCsv(csvHeader() + line);
        expect(row!.payload).toEqual({ action_type: 'sms', message });
        expect(row!.label).toBe(label);
      }),
    );
  });

  it('never starts a cell with a formula character', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const cell = csvCell(s);
        const unquoted = cell.startsWith('"') ? cell.slice(1) : cell;
        expect(/^[=+\-@\t\r]/.test(unquoted)).toBe(false);
      }),
    );
  });

  it('reads links as JSON, leaves unknown shapes to the payload check and skips lines of empty cells', () => {
    const rows = rowsFromCsv('label,payload.links,payload.title\r\n\r\n,,\r\nA,"[{""label"":""x"",""url"":""https://e.x""}]",T\r\nB,not json,\r\n,,\r\n');
    expect(rows).toEqual([
      { label: 'A', payload: { links: [{ label: 'x', url: 'https://e.x' }], title: 'T' } },
      { label: 'B', payload: { links: 'not json' } },
    ]);
  });
});
