import { z } from 'zod';

/** Pairing a running standalone instance with a remote (docs/sync.md, "Pairing from the console"). */
export const PairBody = z
  .strictObject({
    remote: z
      .string({ error: 'must be a string' })
      .max(2048, 'must be at most 2048 characters')
      .regex(/^https?:\/\/[^/\s?#]+\/?$/i, 'must be an http(s) origin such as https://waymark.example.com')
      .meta({ description: 'Origin of the remote Waymark instance.' }),
    remote_key: z
      .string({ error: 'must be a string' })
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .regex(/^\S+$/, 'must not contain spaces')
      .meta({ description: 'API key of the organization on the remote. Stored outside the database (secret store), never returned.' }),
  })
  .meta({ id: 'SyncPairBody' });

export type PairInput = z.infer<typeof PairBody>;
