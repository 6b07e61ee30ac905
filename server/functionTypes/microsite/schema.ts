import { z } from 'zod';
import { httpUrl, text } from '../../schemas/common.ts';
import { links, optionalText } from '../fields.ts';

export const MicrositePayload = z
  .strictObject({
    title: text(200),
    body: optionalText(10_000),
    image_url: httpUrl.optional(),
    theme_color: z.string().regex(/^#[0-9A-Fa-f]{6}$/, 'must be a colour like #1A2B3C').optional(),
    links: links.optional(),
  })
  .meta({ id: 'MicrositePayload' });
export type MicrositePayloadT = z.infer<typeof MicrositePayload>;
