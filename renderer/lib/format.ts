const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const number = new Intl.NumberFormat();

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

export function formatNumber(n: number): string {
  return number.format(n);
}

export function humanize(value: string): string {
  const s = value.replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export const FUNCTION_TYPE_LABELS: Record<string, string> = {
  redirect: 'Redirect',
  vcard: 'vCard contact',
  wifi: 'Wi-Fi',
  microsite: 'Microsite',
  digital_card: 'Digital card',
  action: 'Action',
};

export function typeLabel(type: string): string {
  return FUNCTION_TYPE_LABELS[type] ?? humanize(type);
}

/** A scan's source in words (docs/scans.md "Sources"). */
const SOURCE_LABELS: Record<string, string> = { qr: 'QR code', nfc_verified: 'NFC tap, verified', nfc_unverified: 'NFC link, not verified' };

export function sourceLabel(value: string | null): string {
  return value === null ? 'Unknown' : (SOURCE_LABELS[value] ?? value);
}
