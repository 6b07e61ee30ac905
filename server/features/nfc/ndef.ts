/**
 * NDEF (NFC Forum Data Exchange Format) URI records, with the URI identifier code that
 * abbreviates the scheme prefix (NFC Forum URI RTD). Pure functions, no I/O.
 */

/** URI identifier codes (NFC Forum URI RTD 1.0, table 3). Index = code. */
export const URI_PREFIXES: readonly string[] = [
  '', 'http://www.', 'https://www.', 'http://', 'https://', 'tel:', 'mailto:',
  'ftp://anonymous:anonymous@', 'ftp://ftp.', 'ftps://', 'sftp://', 'smb://', 'nfs://', 'ftp://',
  'dav://', 'news:', 'telnet://', 'imap:', 'rtsp://', 'urn:', 'pop:', 'sip:', 'sips:', 'tftp:',
  'btspp://', 'btl2cap://', 'btgoep://', 'tcpobex://', 'irdaobex://', 'file://', 'urn:epc:id:',
  'urn:epc:tag:', 'urn:epc:pat:', 'urn:epc:raw:', 'urn:epc:', 'urn:nfc:',
];

/** The longest prefix of the table that `uri` starts with (case-sensitive, as the RTD says). */
export function uriIdentifierCode(uri: string): number {
  let best = 0;
  for (let code = 1; code < URI_PREFIXES.length; code++) {
    const p = URI_PREFIXES[code]!;
    if (uri.startsWith(p) && p.length > URI_PREFIXES[best]!.length) best = code;
  }
  return best;
}

/**
 * An NDEF message holding one URI record (MB=ME=1, TNF well-known, type "U"). Short record
 * (SR) when the payload fits in 255 bytes, otherwise a 4-byte payload length.
 */
export function encodeUriMessage(uri: string): Buffer {
  const code = uriIdentifierCode(uri);
  const rest = Buffer.from(uri.slice(URI_PREFIXES[code]!.length), 'utf8');
  const payload = Buffer.concat([Buffer.from([code]), rest]);
  if (payload.length <= 255) {
    return Buffer.concat([Buffer.from([0xd1, 0x01, payload.length, 0x55]), payload]);
  }
  const header = Buffer.alloc(7);
  header[0] = 0xc1; // MB ME, not SR, TNF 1
  header[1] = 0x01;
  header.writeUInt32BE(payload.length, 2);
  header[6] = 0x55;
  return Buffer.concat([header, payload]);
}

/** The URI of the first record of an NDEF message, or null when it is not a URI record. */
export function decodeUriMessage(message: Buffer): string | null {
  if (message.length < 4) return null;
  const flags = message[0]!;
  const tnf = flags & 0x07;
  const sr = (flags & 0x10) !== 0;
  const il = (flags & 0x08) !== 0;
  const typeLength = message[1]!;
  let at = 2;
  let payloadLength: number;
  if (sr) {
    payloadLength = message[at]!;
    at += 1;
  } else {
    if (message.length < at + 4) return null;
    payloadLength = message.readUInt32BE(at);
    at += 4;
  }
  const idLength = il ? message[at++]! : 0;
  const type = message.subarray(at, at + typeLength);
  at += typeLength + idLength;
  if (tnf !== 0x01 || type.length !== 1 || type[0] !== 0x55) return null;
  if (payloadLength < 1 || at + payloadLength > message.length) return null;
  const code = message[at]!;
  const prefix = URI_PREFIXES[code];
  if (prefix === undefined) return null;
  return prefix + message.subarray(at + 1, at + payloadLength).toString('utf8');
}

/** The URL written on an NFC tag for a scan URL: `?nfc` appended (DESIGN §3, scan source). */
export function nfcTagUrl(scanUrl: string): string {
  return scanUrl.includes('?') ? `${scanUrl}&nfc` : `${scanUrl}?nfc`;
}
