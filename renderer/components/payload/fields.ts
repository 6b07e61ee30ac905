import { ACTION_TYPES, WIFI_SECURITY } from '../../../server/schemas/payloads.ts';
import type { FunctionType } from '../../../server/schemas/common.ts';

export interface FieldDef {
  name: string;
  label: string;
  kind: 'text' | 'url' | 'email' | 'tel' | 'textarea' | 'select' | 'color' | 'password' | 'links';
  required?: boolean;
  options?: readonly string[];
  placeholder?: string;
  hint?: string;
  /** Shown only when this returns true for the current value. */
  when?: (value: Record<string, unknown>) => boolean;
}

/** The form of each function type; the rules (required, formats) come from the shared zod schemas. */
export const PAYLOAD_FORMS: Record<FunctionType, FieldDef[]> = {
  redirect: [{ name: 'url', label: 'Destination URL', kind: 'url', required: true, placeholder: 'https://example.com/page', hint: 'http or https, up to 2048 characters.' }],
  vcard: [
    { name: 'first_name', label: 'First name', kind: 'text', required: true },
    { name: 'last_name', label: 'Last name', kind: 'text' },
    { name: 'organization', label: 'Organization', kind: 'text' },
    { name: 'job_title', label: 'Job title', kind: 'text' },
    { name: 'email', label: 'Email', kind: 'email' },
    { name: 'phone', label: 'Phone', kind: 'tel', placeholder: '+33 1 23 45 67 89' },
    { name: 'website', label: 'Website', kind: 'url', placeholder: 'https://' },
  ],
  wifi: [
    { name: 'ssid', label: 'Network name (SSID)', kind: 'text', required: true },
    { name: 'security', label: 'Security', kind: 'select', options: WIFI_SECURITY, hint: 'WPA2 when not set. "nopass" is an open network.' },
    { name: 'password', label: 'Password', kind: 'password', when: (v) => v.security !== 'nopass', hint: '8 to 63 characters for WPA networks.' },
  ],
  action: [
    { name: 'action_type', label: 'Action', kind: 'select', required: true, options: ACTION_TYPES },
    { name: 'phone', label: 'Phone', kind: 'tel', when: (v) => v.action_type !== 'email', placeholder: '+33 6 12 34 56 78' },
    { name: 'email', label: 'Email', kind: 'email', when: (v) => v.action_type === 'email' },
    { name: 'message', label: 'Message', kind: 'textarea', hint: 'Prefilled text (optional).' },
  ],
  microsite: [
    { name: 'title', label: 'Title', kind: 'text', required: true },
    { name: 'body', label: 'Body', kind: 'textarea' },
    { name: 'image_url', label: 'Image URL', kind: 'url', placeholder: 'https://' },
    { name: 'theme_color', label: 'Theme colour', kind: 'color', hint: 'Like #1A2B3C.' },
    { name: 'links', label: 'Links', kind: 'links' },
  ],
  digital_card: [
    { name: 'name', label: 'Name', kind: 'text', required: true },
    { name: 'job_title', label: 'Job title', kind: 'text' },
    { name: 'organization', label: 'Organization', kind: 'text' },
    { name: 'email', label: 'Email', kind: 'email' },
    { name: 'phone', label: 'Phone', kind: 'tel' },
    { name: 'website', label: 'Website', kind: 'url', placeholder: 'https://' },
    { name: 'avatar_url', label: 'Photo URL', kind: 'url', placeholder: 'https://' },
    { name: 'bio', label: 'Bio', kind: 'textarea' },
    { name: 'links', label: 'Links', kind: 'links' },
  ],
};

export interface LinkValue {
  label: string;
  url: string;
}

/** What the form holds → the payload to send: empty strings and empty link rows dropped. */
export function cleanPayload(type: FunctionType, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const def of PAYLOAD_FORMS[type]) {
    if (def.when && !def.when(value)) continue;
    const v = value[def.name];
    if (def.kind === 'links') {
      const rows = (Array.isArray(v) ? (v as LinkValue[]) : []).filter((l) => l.label.trim() !== '' || l.url.trim() !== '');
      if (rows.length > 0) out[def.name] = rows.map((l) => ({ label: l.label, url: l.url.trim() }));
    } else if (typeof v === 'string' && v.trim() !== '') {
      out[def.name] = def.kind === 'url' || def.kind === 'email' ? v.trim() : v;
    }
  }
  return out;
}

/** A JSON Merge Patch that turns `before` into `after` (removed keys → null). */
export function mergePatch(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(before)) if (!(key in after)) patch[key] = null;
  for (const [key, v] of Object.entries(after)) if (JSON.stringify(before[key]) !== JSON.stringify(v)) patch[key] = v;
  return patch;
}

export function summarizePayload(type: string, payload: Record<string, unknown>): string {
  const s = (k: string) => (typeof payload[k] === 'string' ? (payload[k] as string) : '');
  switch (type) {
    case 'redirect':
      return s('url');
    case 'vcard':
      return [s('first_name'), s('last_name')].filter(Boolean).join(' ');
    case 'wifi':
      return s('ssid');
    case 'action':
      return [s('action_type'), s('phone') || s('email')].filter(Boolean).join(' · ');
    case 'microsite':
      return s('title');
    case 'digital_card':
      return s('name');
    default:
      return '';
  }
}
