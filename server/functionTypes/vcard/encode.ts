/** vCard 3.0 (RFC 2426) for a vcard payload, or for a digital card's "Save contact". Pure. */
import type { VcardPayloadT } from './schema.ts';

/** What a contact file carries: a vcard payload, plus NOTE (a digital card's bio). */
export type VcardData = VcardPayloadT & { note?: string };

/** TEXT value escaping (RFC 2426 §4, 5.): backslash, newline, comma, semicolon. */
export function escapeVcardText(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\r\n|\r|\n/g, '\\n').replace(/,/g, '\\,').replace(/;/g, '\\;');
}

/**
 * Folds a content line at 75 octets (UTF-8), continuing with CRLF + one space, never splitting
 * a multi-byte character.
 */
export function foldLine(line: string): string {
  const out: string[] = [];
  let current = '';
  let octets = 0;
  let limit = 75;
  for (const ch of line) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (octets + size > limit) {
      out.push(current);
      current = '';
      octets = 0;
      limit = 74; // continuation lines start with a space, which counts
    }
    current += ch;
    octets += size;
  }
  out.push(current);
  return out.join('\r\n ');
}

export function buildVcard(p: VcardData): string {
  const first = p.first_name.trim();
  const last = (p.last_name ?? '').trim();
  const full = [first, last].filter(Boolean).join(' ');
  const lines = [
    'BEGIN:VCARD',
    'VERSION:3.0',
    `N:${escapeVcardText(last)};${escapeVcardText(first)};;;`,
    `FN:${escapeVcardText(full)}`,
  ];
  if (p.organization) lines.push(`ORG:${escapeVcardText(p.organization)}`);
  if (p.job_title) lines.push(`TITLE:${escapeVcardText(p.job_title)}`);
  if (p.phone) lines.push(`TEL;TYPE=CELL:${escapeVcardText(p.phone)}`);
  if (p.email) lines.push(`EMAIL;TYPE=INTERNET:${escapeVcardText(p.email)}`);
  // URL is a uri value, not TEXT: no backslash escaping (validated http/https, no line breaks).
  if (p.website) lines.push(`URL:${p.website}`);
  if (p.note) lines.push(`NOTE:${escapeVcardText(p.note)}`);
  lines.push('END:VCARD');
  return lines.map(foldLine).join('\r\n') + '\r\n';
}

/** A safe download name for the contact, ASCII only (the header also carries filename*). */
export function vcardFileName(p: VcardPayloadT): { ascii: string; utf8: string } {
  const base = [p.first_name, p.last_name].filter(Boolean).join(' ').trim() || 'contact';
  const ascii = base.normalize('NFKD').replace(/[^\x20-\x7e]/g, '').replace(/["\\/:*?<>|]/g, '').trim() || 'contact';
  return { ascii: `${ascii.slice(0, 60)}.vcf`, utf8: `${base.replace(/[\\/:*?"<>|\r\n]/g, '').slice(0, 60)}.vcf` };
}
