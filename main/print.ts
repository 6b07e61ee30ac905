// Printing from the desktop app: the console hands main a PDF it fetched from the API; main saves
// it to a private temp folder and opens it in the system's PDF viewer, whose Print command shows
// the system print dialog. (Chromium's own viewer prints PDFs blank from webContents.print().)
// Only the checks live here, so they are testable without Electron.

/** Large enough for a 500-label sheet with room to spare. */
export const MAX_PRINT_BYTES = 50 * 1024 * 1024;

export type PrintRequestCheck = { ok: true; bytes: Uint8Array; filename: string } | { ok: false; reason: string };

/** Accepts only a real PDF of sane size, and a filename reduced to a safe basename. */
export function checkPrintRequest(bytes: unknown, filename: unknown): PrintRequestCheck {
  if (!(bytes instanceof Uint8Array)) return { ok: false, reason: 'not a byte array' };
  if (bytes.byteLength > MAX_PRINT_BYTES) return { ok: false, reason: 'PDF too large' };
  const magic = String.fromCharCode(...bytes.subarray(0, 5));
  if (magic !== '%PDF-') return { ok: false, reason: 'not a PDF' };
  return { ok: true, bytes, filename: safePdfName(filename) };
}

/** `CAFE-labels.pdf` stays; paths, control characters and odd names collapse to something safe. */
export function safePdfName(filename: unknown): string {
  const base = typeof filename === 'string' ? (filename.split(/[\\/]/).pop() ?? '') : '';
  const cleaned = base
    .replace(/\.pdf$/i, '')
    .replace(/[^A-Za-z0-9 ._-]/g, '_')
    .replace(/^[.\s]+/, '')
    .slice(0, 80)
    .trim();
  return `${cleaned || 'waymark-labels'}.pdf`;
}
