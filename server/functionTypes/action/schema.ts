import { z } from 'zod';
import { oneOf } from '../../schemas/common.ts';
import { email, optionalText, phone } from '../fields.ts';

export const ACTION_TYPES = ['whatsapp', 'telegram', 'sms', 'call', 'email'] as const;

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
export type ActionPayloadT = z.infer<typeof ActionPayload>;
