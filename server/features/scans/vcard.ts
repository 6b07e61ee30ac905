/**
 * vCard 3.0 (RFC 2426) for a vcard payload, and the WIFI: string for a Wi-Fi QR code. Pure.
 */

export interface VcardData {
  first_name: string;
  last_name?: string;
  email?: string;
  phone?: string;
  organization?: string;
  website?: string;
  job_title?: string;
  /** NOTE (a digital card's bio). */
  note?: string;
}

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
export function vcardFileName(p: VcardData): { ascii: string; utf8: string } {
  const base = [p.first_name, p.last_name].filter(Boolean).join(' ').trim() || 'contact';
  const ascii = base.normalize('NFKD').replace(/[^\x20-\x7e]/g, '').replace(/["\\/:*?<>|]/g, '').trim() || 'contact';
  return { ascii: `${ascii.slice(0, 60)}.vcf`, utf8: `${base.replace(/[\\/:*?"<>|\r\n]/g, '').slice(0, 60)}.vcf` };
}

// ---- Wi-Fi -----------------------------------------------------------------------------------

/** Escapes a WIFI: field: backslash, semicolon, comma, colon and double quote get a backslash. */
export function escapeWifi(value: string): string {
  return value.replace(/([\\;,:"])/g, '\\$1');
}

export interface WifiData {
  ssid: string;
  password?: string;
  security?: 'WPA' | 'WPA2' | 'WPA3' | 'WEP' | 'nopass';
}

/**
 * The `WIFI:` string that phone cameras join from (ZXing's format). WPA, WPA2 and WPA3 personal
 * are all written `T:WPA` (the value phones accept for any WPA generation; the network and the
 * phone negotiate WPA3-SAE themselves), WEP as `T:WEP`, an open network as `T:nopass`.
 */
export function buildWifiString(p: WifiData): string {
  const security = p.security ?? 'WPA2';
  const type = security === 'nopass' ? 'nopass' : security === 'WEP' ? 'WEP' : 'WPA';
  let out = `WIFI:T:${type};S:${escapeWifi(p.ssid)};`;
  if (type !== 'nopass' && p.password) out += `P:${escapeWifi(p.password)};`;
  return out + ';';
}
