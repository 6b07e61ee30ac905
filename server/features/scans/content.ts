/**
 * Whether a stored payload is complete enough to serve for its function type. Payloads are
 * validated strictly on write (server/schemas/payloads.ts); this is the scan path's defensive
 * check, so that an unconfigured batch node (empty payload) gives the "not active yet" page and a
 * damaged row can never produce a 5xx or an unsafe link.
 */
const str = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0;
const httpUrl = (v: unknown): boolean => {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
};
const optStr = (v: unknown) => v === undefined || typeof v === 'string';
const optUrl = (v: unknown) => v === undefined || httpUrl(v);
const optLinks = (v: unknown) =>
  v === undefined || (Array.isArray(v) && v.every((l) => l && typeof l === 'object' && str(l.label) && httpUrl(l.url)));

export function isValidContent(functionType: string, p: Record<string, unknown>): boolean {
  switch (functionType) {
    case 'redirect':
      return httpUrl(p.url);
    case 'vcard':
      return (
        str(p.first_name) &&
        ['last_name', 'email', 'phone', 'organization', 'job_title'].every((k) => optStr(p[k])) &&
        optUrl(p.website)
      );
    case 'wifi': {
      const security = p.security ?? 'WPA2';
      if (!str(p.ssid) || !['WPA', 'WPA2', 'WPA3', 'WEP', 'nopass'].includes(security as string)) return false;
      return security === 'nopass' ? optStr(p.password) : str(p.password);
    }
    case 'microsite':
      return str(p.title) && optStr(p.body) && optUrl(p.image_url) && optStr(p.theme_color) && optLinks(p.links);
    case 'digital_card':
      return (
        str(p.name) &&
        ['job_title', 'organization', 'email', 'phone', 'bio'].every((k) => optStr(p[k])) &&
        optUrl(p.website) &&
        optUrl(p.avatar_url) &&
        optLinks(p.links)
      );
    case 'action':
      if (p.action_type === 'email') return str(p.email) && optStr(p.message);
      return ['whatsapp', 'telegram', 'sms', 'call'].includes(p.action_type as string) && str(p.phone) && /\d/.test(p.phone) && optStr(p.message);
    default:
      return false;
  }
}
