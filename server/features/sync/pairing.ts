import { ConflictError, ValidationError } from '../../platform/errors.ts';
import type { SecretStore } from '../../platform/secrets.ts';
import type { PairInput } from '../../schemas/syncPairing.ts';
import { ForkedError, HttpRemoteClient, type RemoteApi, RemoteRefusedError, RemoteUnavailableError } from './client.ts';
import type { Executor } from '../../db/store.ts';
import type { SyncRepo } from './repo.ts';
import { KEYS, type SiteSync } from './site.ts';
import type { SyncWorker } from './worker.ts';

/** Name of the remote key in the secret store. */
export const REMOTE_KEY_SECRET = 'sync.remote_key';

function origin(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * The client a site starts with: `--remote-key` wins; otherwise the key stored by a runtime
 * pairing, for the remote this data directory is paired with.
 */
export async function startupClient(
  db: Executor,
  repo: SyncRepo,
  secrets: SecretStore,
  config: { remoteUrl?: string | undefined; remoteKey?: string | undefined },
): Promise<{ url: string; client: RemoteApi; from: 'flag' | 'store' } | undefined> {
  if (config.remoteUrl && config.remoteKey) return { url: config.remoteUrl, client: new HttpRemoteClient(config.remoteUrl, config.remoteKey), from: 'flag' };
  const paired = await repo.getSetting(db, KEYS.remoteUrl);
  const url = config.remoteUrl ? origin(config.remoteUrl) : paired;
  // Another --remote than the stored one is refused by SiteSync; no stored key is used for it.
  if (!url || (paired && paired !== url)) return undefined;
  const key = secrets.get(REMOTE_KEY_SECRET);
  return key ? { url, client: new HttpRemoteClient(url, key), from: 'store' } : undefined;
}

export interface PairingDeps {
  site: SiteSync;
  worker: Pick<SyncWorker, 'start' | 'stop' | 'runNow'>;
  secrets: SecretStore;
  /** The client in use at start, and whether it came from --remote-key. */
  initial: { client: RemoteApi; from: 'flag' | 'store' } | undefined;
  /** Makes the client for a remote and key (tests may route it through a proxy). */
  makeClient?: (url: string, key: string) => RemoteApi;
}

/**
 * Runtime pairing (`POST /v1/sync/pair`): a running standalone instance registers with a remote
 * and keeps the key in the secret store, so it stays paired after a restart. The same call, on
 * an instance already paired with that remote but without a working key (started without one,
 * or its key was revoked), stores a new key once the remote accepts it. Pairing with another
 * remote is refused: the site's blocks and identity belong to the first one (docs/sync.md).
 */
export class Pairing {
  private readonly deps: PairingDeps;
  private client: RemoteApi | undefined;
  private fromFlag: boolean;
  private busy = false;
  private closed = false;
  private inFlight: RemoteApi | undefined;

  constructor(deps: PairingDeps) {
    this.deps = deps;
    this.client = deps.initial?.client;
    this.fromFlag = deps.initial?.from === 'flag';
  }

  /** `orgId`: the organization of the key that asks; pulled rows will land in it (sync.local_org). */
  async pair(input: PairInput, orgId: string): Promise<void> {
    const { site, worker, secrets } = this.deps;
    const url = origin(input.remote);
    if (this.closed) throw new ConflictError('This instance is shutting down');
    const paired = site.remoteUrl;
    if (paired && paired !== url) {
      throw new ConflictError(`This instance is paired with ${paired}; pairing it with another remote is not supported (its slug blocks and site identity belong to ${paired})`);
    }
    if (this.fromFlag) {
      throw new ConflictError(`This instance was started with --remote-key (or WAYMARK_REMOTE_KEY), which wins over a key set here: change the key where it is started`);
    }
    // A key may be replaced only when there is none or the remote refused it (a refusal is an
    // answer: online with an error); an unreachable remote is no reason to change keys.
    const status = await site.status();
    if (paired && this.client && !(status.online === true && status.last_error !== null)) {
      throw new ConflictError(`This instance is already paired with ${paired}${status.online === false ? ' (unreachable right now: it retries on its own)' : ''}`);
    }
    if (this.busy) throw new ConflictError('A pairing is already in progress');
    this.busy = true;
    const client = (this.deps.makeClient ?? ((u, k) => new HttpRemoteClient(u, k)))(url, input.remote_key);
    this.inFlight = client;
    // The worker must not call the remote with the old key while the new one registers: both
    // would present the same fencing token.
    await worker.stop();
    try {
      await site.pairWith(url, client, async (tx) => {
        // The organization that pairs is the one bound to the remote's, unless one already is.
        await site.bindOrgIfUnbound(tx, orgId);
        try {
          secrets.set(REMOTE_KEY_SECRET, input.remote_key);
        } catch (err) {
          // Thrown inside the registration's transaction: it rolls back, nothing is stored.
          throw new ConflictError(`Cannot pair: ${err instanceof Error ? err.message : String(err)}`);
        }
      });
    } catch (err) {
      client.close?.();
      throw refusal(err, url);
    } finally {
      this.busy = false;
      this.inFlight = undefined;
      // Not after shutdown began: the worker would outlive the database.
      if (!this.closed) worker.start();
    }
    this.client?.close?.();
    this.client = client;
    await worker.runNow(); // top the reserve up now, so the answer shows it
  }

  /** At shutdown: aborts calls in flight (a pairing's too) and keeps the worker stopped. */
  close(): void {
    this.closed = true;
    this.inFlight?.close?.();
    this.client?.close?.();
  }
}

/** The remote's answer, as a 4xx of ours in the spec's format (never a 5xx: the fault is not here). */
function refusal(err: unknown, url: string): Error {
  if (err instanceof RemoteUnavailableError) {
    return new ValidationError({ remote: `No Waymark instance answered at ${url}: ${err.message}` }, `Cannot pair: ${url} could not be reached (${err.message})`);
  }
  if (err instanceof RemoteRefusedError && (err.status === 401 || err.status === 403)) {
    return new ValidationError({ remote_key: `The remote refused this key (${err.status})` }, `Cannot pair: ${err.message}`);
  }
  if (err instanceof RemoteRefusedError) return new ConflictError(`Cannot pair: ${err.message}`);
  if (err instanceof ForkedError) return new ConflictError(`Cannot pair: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}
