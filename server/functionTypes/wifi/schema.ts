import { z } from 'zod';
import { oneOf } from '../../schemas/common.ts';

export const WIFI_SECURITY = ['WPA', 'WPA2', 'WPA3', 'WEP', 'nopass'] as const;

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
export type WifiPayloadT = z.infer<typeof WifiPayload>;
