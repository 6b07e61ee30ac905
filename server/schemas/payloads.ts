import { z } from 'zod';
import { FUNCTION_TYPES, type FunctionType, httpUrl, oneOf, text } from './common.ts';
import { partialStrict, pascal } from './documented.ts';

// Payload schemas per function type (DESIGN §3). Strict: unknown keys are rejected.

const phone = z
  .string({ error: 'must be a string' })
  .regex(/^\+?[0-9][0-9 ().-]{2,31}$/, 'must be a phone number (digits, spaces, + ( ) . -)');
const email = z.email({ error: 'must be an email address' }).max(254);
const optionalText = (max: number) => z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`).optional();

export const WIFI_SECURITY = ['WPA', 'WPA2', 'WPA3', 'WEP', 'nopass'] as const;
export const ACTION_TYPES = ['whatsapp', 'telegram', 'sms', 'call', 'email'] as const;

const link = z.strictObject({ label: text(100), url: httpUrl });
const links = z.array(link).max(20, 'must have at most 20 links');

export const RedirectPayload = z.strictObject({ url: httpUrl }).meta({ id: 'RedirectPayload' });

export const VcardPayload = z
  .strictObject({
    first_name: text(100),
    last_name: optionalText(100),
    email: email.optional(),
    phone: phone.optional(),
    organization: optionalText(200),
    website: httpUrl.optional(),
    job_title: optionalText(200),
  })
  .meta({ id: 'VcardPayload' });

export const WifiPayload = z
  .strictObject({
    ssid: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(32, 'must be at most 32 characters'),
    password: z.string({ error: 'must be a string' }).max(63, 'must be at most 63 characters').optional(),
    security: oneOf(WIFI_SECURITY).optional().meta({ description: 'Defaults to WPA2.' }),
  })
  .superRefine((p, ctx) => {
    const security = p.security ?? 'WPA2';
    if (security === 'nopass') return;
    if (p.password === undefined || p.password === '') {
      ctx.addIssue({ code: 'custom', path: ['password'], message: `is required for ${security}` });
    } else if (security.startsWith('WPA') && p.password.length < 8) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: 'must be 8 to 63 characters for WPA' });
    }
  })
  .meta({ id: 'WifiPayload' });

export const ActionPayload = z
  .strictObject({
    action_type: oneOf(ACTION_TYPES),
    phone: phone.optional(),
    message: optionalText(1000),
    email: email.optional(),
  })
  .superRefine((p, ctx) => {
    if (p.action_type === 'email') {
      if (!p.email) ctx.addIssue({ code: 'custom', path: ['email'], message: 'is required for email actions' });
    } else if (!p.phone) {
      ctx.addIssue({ code: 'custom', path: ['phone'], message: `is required for ${p.action_type} actions` });
    }
  })
  .meta({ id: 'ActionPayload' });

export const MicrositePayload = z
  .strictObject({
    title: text(200),
    body: optionalText(10_000),
    image_url: httpUrl.optional(),
    theme_color: z.string().regex(/^#[0-9A-Fa-f]{6}$/, 'must be a colour like #1A2B3C').optional(),
    links: links.optional(),
  })
  .meta({ id: 'MicrositePayload' });

export const DigitalCardPayload = z
  .strictObject({
    name: text(200),
    job_title: optionalText(200),
    organization: optionalText(200),
    email: email.optional(),
    phone: phone.optional(),
    website: httpUrl.optional(),
    avatar_url: httpUrl.optional(),
    bio: optionalText(2000),
    links: links.optional(),
  })
  .meta({ id: 'DigitalCardPayload' });

export const payloadSchemas = {
  redirect: RedirectPayload,
  vcard: VcardPayload,
  wifi: WifiPayload,
  microsite: MicrositePayload,
  digital_card: DigitalCardPayload,
  action: ActionPayload,
} as const satisfies Record<FunctionType, z.ZodType>;

/** The keys each payload type knows (for templates' locked_fields and partial payloads). */
export const payloadFields: Record<FunctionType, readonly string[]> = {
  redirect: ['url'],
  vcard: ['first_name', 'last_name', 'email', 'phone', 'organization', 'website', 'job_title'],
  wifi: ['ssid', 'password', 'security'],
  microsite: ['title', 'body', 'image_url', 'theme_color', 'links'],
  digital_card: ['name', 'job_title', 'organization', 'email', 'phone', 'website', 'avatar_url', 'bio', 'links'],
  action: ['action_type', 'phone', 'message', 'email'],
};

export type Payload = Record<string, unknown>;
export type RedirectPayloadT = z.infer<typeof RedirectPayload>;
export type VcardPayloadT = z.infer<typeof VcardPayload>;
export type WifiPayloadT = z.infer<typeof WifiPayload>;
export type ActionPayloadT = z.infer<typeof ActionPayload>;
export type MicrositePayloadT = z.infer<typeof MicrositePayload>;
export type DigitalCardPayloadT = z.infer<typeof DigitalCardPayload>;

/** Any JSON object (the shape is checked against the function type by the domain). */
export const payloadObject = z
  .record(z.string(), z.unknown(), { error: 'must be an object' })
  .meta({ description: 'Type-specific configuration: one of the *Payload components, as function_type says.' });

/**
 * Each payload with every field optional, as a component of the document: a template's payload,
 * or the payload of a node or batch made from a template (the template fills in the rest).
 */
export const partialPayloadSchemas = {} as Record<FunctionType, z.ZodType>;
for (const type of FUNCTION_TYPES) {
  partialPayloadSchemas[type] = partialStrict(payloadSchemas[type].shape).meta({
    id: `${pascal(type)}PartialPayload`,
    description: `Any fields of ${pascal(type)}Payload (a template fills in the rest).`,
  });
}
