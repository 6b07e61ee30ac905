import { z } from 'zod';
import { httpUrl, text } from '../../schemas/common.ts';
import { email, optionalText, phone } from '../fields.ts';

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
export type VcardPayloadT = z.infer<typeof VcardPayload>;
