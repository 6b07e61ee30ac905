import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SyncConfig } from './features/sync/index.ts';
import type { OutboxPruneOptions } from './platform/outboxPruner.ts';

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
  /** Webhook delivery settings (docs/webhooks.md). */
  webhooks: WebhookSettings;
  /** Folder of the built console served at /console/ (default: out/renderer of the project). */
  consoleDir?: string | undefined;
  /** Pairing with a remote and slug leases (docs/sync.md); absent = standalone. */
  sync?: SyncConfig | undefined;
  /** How long a process's claim on a batch it generates lasts after each chunk (default 30 s; tests shorten it). */
  batchLeaseMs?: number | undefined;
  /** Pruning of the event outbox (platform/outboxPruner.ts; retention 7 days, hourly, by default). */
  outboxPrune?: Partial<OutboxPruneOptions> | undefined;
}

export interface WebhookSettings {
  /**
   * Refuse private, loopback, link-local and metadata receivers. startServer turns it on for an
   * instance listening on anything but loopback, unless `--webhooks-allow-private`.
   */
  publicOnly: boolean;
  /** First retry delay; later ones scale from it (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h). Default 5000. */
  retryBaseMs: number;
  /** Per-attempt timeout. Default 15000. */
  timeoutMs: number;
  /** An endpoint failing continuously for this long is disabled. Default 5 days. */
  disableAfterMs: number;
  /** Finished deliveries (and their attempt logs) are kept this long. Default 30 days. */
  retentionMs: number;
}

export const defaultWebhookSettings: WebhookSettings = {
  publicOnly: false,
  retryBaseMs: 5000,
  timeoutMs: 15_000,
  disableAfterMs: 5 * 24 * 60 * 60 * 1000,
  retentionMs: 30 * 24 * 60 * 60 * 1000,
};

/**
 * The version from the project's package.json, found by walking up from this file (it sits one
 * level up from server/ in the sources, two from out/main/ when Electron's main bundle carries it).
 */
function readVersion(): string {
  let dir = import.meta.dirname;
  for (let i = 0; i < 4; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'waymark' && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

export const VERSION: string = readVersion();

export function makeConfig(
  partial: Partial<Omit<AppConfig, 'webhooks'>> & Pick<AppConfig, 'scanBase'> & { webhooks?: Partial<WebhookSettings> | undefined },
): AppConfig {
  const scanBase = partial.scanBase.replace(/\/+$/, '');
  return {
    scanBase,
    publicUrl: (partial.publicUrl ?? scanBase).replace(/\/+$/, ''),
    trustProxy: partial.trustProxy ?? false,
    dataDir: partial.dataDir ?? '',
    version: partial.version ?? VERSION,
    consoleDir: partial.consoleDir,
    webhooks: { ...defaultWebhookSettings, ...definedOnly(partial.webhooks ?? {}) },
    ...(partial.sync ? { sync: partial.sync } : {}),
    ...(partial.batchLeaseMs !== undefined ? { batchLeaseMs: partial.batchLeaseMs } : {}),
    ...(partial.outboxPrune ? { outboxPrune: partial.outboxPrune } : {}),
  };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
