import { defineFunctionType } from '../define.ts';
import { RedirectPayload } from './schema.ts';

export const redirect = defineFunctionType({
  schema: RedirectPayload,
  respond: (p) => ({ kind: 'redirect', location: new URL(p.url).href }),
});
