/**
 * RFC 4180 CSV. Cells that a spreadsheet would run as a formula (= + - @ tab CR at the start)
 * get a leading apostrophe (OWASP CSV-injection advice).
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let s = String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

export function csvRow(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

export function toCsv(header: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return csvRow(header) + rows.map(csvRow).join('');
}
