import { z } from 'zod';
import { httpUrl, text } from '../../schemas/common.ts';
import { email, links, optionalText, phone } from '../fields.ts';

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
export type DigitalCardPayloadT = z.infer<typeof DigitalCardPayload>;
