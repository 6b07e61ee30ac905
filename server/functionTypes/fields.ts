/**
 * Field schemas shared by several payload types. Zod only: the console imports the payload
 * schemas (through server/schemas/payloads.ts), so nothing here may pull in server runtime code.
 */
import { z } from 'zod';
import { httpUrl, text } from '../schemas/common.ts';

export const phone = z
  .string({ error: 'must be a string' })
  .regex(/^\+?[0-9][0-9 ().-]{2,31}$/, 'must be a phone number (digits, spaces, + ( ) . -)');
export const email = z.email({ error: 'must be an email address' }).max(254);
export const optionalText = (max: number) => z.string({ error: 'must be a string' }).max(max, `must be at most ${max} characters`).optional();

const link = z.strictObject({ label: text(100), url: httpUrl });
export const links = z.array(link).max(20, 'must have at most 20 links');
