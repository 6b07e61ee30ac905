/**
 * RFC 4180 CSV output. Cells that a spreadsheet would run as a formula (= + - @ tab CR at the
 * start) get a leading apostrophe (OWASP CSV-injection advice); so does a cell that is already
 * apostrophes before such a character, so that `csvUnguard` (for CSV read back in, as the node
 * import does) gives every value back exactly.
 */
const FORMULA_START = /^'*[=+\-@\t\r]/;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** The value `csvCell` guarded: one leading apostrophe removed where csvCell added one. */
export function csvUnguard(cell: string): string {
  return cell.startsWith("'") && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell;
}

export function csvRow(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

export function toCsv(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return csvRow(header) + rows.map(csvRow).join('');
}
