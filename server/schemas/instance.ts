import { z } from 'zod';
import { PLANS, oneOf } from './common.ts';

/** GET /v1/instance: what the console's Settings/About screen shows. */
export const Instance = z
  .object({
    version: z.string(),
    server_url: z.string().meta({ description: 'Origin of this API as the caller reached it.' }),
    api_base: z.string().meta({ description: '{base_url}: server_url + /v1' }),
    scan_base: z.string().meta({ description: 'Scan URLs are {scan_base}/v/<slug>.' }),
    data_dir: z.string().optional().meta({ description: 'The data directory on this machine: only for an instance-admin key.' }),
    organization: z.object({ id: z.string(), name: z.string() }),
    key: z
      .object({ id: z.string(), plan: oneOf(PLANS), admin: z.boolean().meta({ description: 'An instance-admin key (docs/api.md, "Instance-admin keys").' }) })
      .meta({ description: 'The key that made this call.' }),
  })
  .meta({ id: 'Instance' });
export type InstanceT = z.infer<typeof Instance>;
