/** Saves a Blob as a file (an object URL and a temporary link with `download`). */
export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Copies text; falls back to a hidden textarea where the Clipboard API is unavailable (plain http on the LAN). */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall through
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'visually-hidden';
  document.body.append(area);
  area.select();
  let ok: boolean;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/** In the desktop app: hands the PDF to the system viewer for printing. Absent in a browser. */
export const desktopPrint: ((blob: Blob, filename: string) => Promise<void>) | undefined = window.waymark?.printPdf
  ? async (blob, filename) => window.waymark!.printPdf!(new Uint8Array(await blob.arrayBuffer()), filename)
  : undefined;
