import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SyncConfig } from './features/sync/index.ts';

export interface AppConfig {
  /** Public address printed on tags: scan URLs are `{scanBase}/v/<slug>`. No trailing slash. */
  scanBase: string;
  /** Origin of this API as clients should reach it (used where no request is at hand, e.g. events). */
  publicUrl: string;
  /** Honour X-Forwarded-For / X-Forwarded-Proto / CF-IPCountry (only behind a proxy you run). */
  trustProxy: boolean;
  /** Where the data lives (shown in the console's About screen). */
  dataDir: string;
  version: string;
  /** Pairing with a remote and slug leases (docs/sync.md); absent = standalone. */
  sync?: SyncConfig | undefined;
}

export const VERSION: string = (
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }
).version;

export function makeConfig(partial: Partial<AppConfig> & Pick<AppConfig, 'scanBase'>): AppConfig {
  const scanBase = partial.scanBase.replace(/\/+$/, '');
  return {
    scanBase,
    publicUrl: (partial.publicUrl ?? scanBase).replace(/\/+$/, ''),
    trustProxy: partial.trustProxy ?? false,
    dataDir: partial.dataDir ?? '',
    version: partial.version ?? VERSION,
    ...(partial.sync ? { sync: partial.sync } : {}),
  };
}
