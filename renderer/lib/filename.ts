/** Content-Disposition parsing, kept free of browser APIs for unit tests. */

/** `attachment; filename="x.pdf"` / `filename*=UTF-8''x.pdf` → `x.pdf` (else the fallback). */
export function filenameFrom(header: string | null, fallback: string): string {
  if (!header) return fallback;
  const star = /filename\*\s*=\s*(?:UTF-8'')?([^;]+)/i.exec(header);
  if (star?.[1]) {
    try {
      return decodeURIComponent(star[1].trim().replace(/^"|"$/g, ''));
    } catch {
      // fall through to the plain parameter
    }
  }
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(header);
  const name = plain?.[1]?.trim();
  // Never let a header pick a path: keep the last segment only.
  return name ? (name.split(/[\\/]/).pop() ?? fallback) : fallback;
}
