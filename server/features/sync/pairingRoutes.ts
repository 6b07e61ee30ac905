import { defineRoute } from '../../http/route.ts';
import { ForbiddenError } from '../../platform/errors.ts';
import { ADMIN_KEY_NEEDED } from '../keys/index.ts';
import { SyncStatus } from '../../schemas/sync.ts';
import { PairBody } from '../../schemas/syncPairing.ts';
import type { Pairing } from './pairing.ts';
import type { SiteSync } from './site.ts';

export function pairingRoutes(deps: { site: SiteSync; pairing: Pairing }) {
  const { site, pairing } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/sync/pair',
      operationId: 'pairWithRemote',
      summary:
        'Pair this running instance with a remote (no restart): registers with the remote using its key, keeps the key in the secret store (never in the database), tops the slug reserve up. Also replaces the key of an instance paired with that same remote that has no key or whose key the remote refuses.',
      tags: ['Sync'],
      body: PairBody,
      responses: {
        200: { description: 'Paired: the status after the first round', schema: SyncStatus },
        403: { description: 'Not an instance-admin key: pairing changes the whole instance (docs/api.md, "Instance-admin keys")' },
        409: { description: 'Already paired (with this or another remote: re-pairing with another remote is not supported), started with --remote-key, a pairing in progress, or the remote refused (e.g. the site is registered with another organization)' },
        422: { description: 'Invalid body, the remote refused the key (its 401), or the remote could not be reached; nothing is stored' },
      },
      handler: async ({ body, auth }) => {
        if (!auth.admin) throw new ForbiddenError(`Pairing changes the whole instance: it ${ADMIN_KEY_NEEDED}`);
        await pairing.pair(body, auth.orgId);
        return { data: await site.status(auth.orgId) };
      },
    }),
  ];
}
