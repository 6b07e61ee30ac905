import { z } from 'zod';
import { httpUrl } from '../../schemas/common.ts';

export const RedirectPayload = z.strictObject({ url: httpUrl }).meta({ id: 'RedirectPayload' });
export type RedirectPayloadT = z.infer<typeof RedirectPayload>;
