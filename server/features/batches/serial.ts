/** `<prefix>-001`: zero-padded to at least three digits. */
export function formatSerial(prefix: string, n: number): string {
  return `${prefix}-${String(n).padStart(3, '0')}`;
}
