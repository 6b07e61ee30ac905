import { join } from 'node:path';
import { InstanceKeys, rootKeyOf, WEBHOOK_DATA_KEY_SECRET } from '../../server/platform/instanceKeys.ts';
import { FileSecretStore } from '../../server/platform/secrets.ts';

/**
 * Opens the webhook secrets an instance keeps sealed under its own data key (from its
 * `<dataDir>/secrets.json`), so tests compare the secrets of two instances as the values they are.
 */
export function webhookSecretOpener(dataDir: string): (stored: unknown, id: string) => unknown {
  const store = new FileSecretStore(join(dataDir, 'secrets.json'));
  const cipher = new InstanceKeys(store, rootKeyOf(store)).cipher(WEBHOOK_DATA_KEY_SECRET);
  return (stored, id) => (typeof stored === 'string' ? cipher.open(stored, id) : stored);
}
