import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { type App, createApp, type Logger, consoleLogger } from './app.ts';
import { type AppConfig, makeConfig, type WebhookSettings } from './config.ts';
import type { SyncConfig } from './features/sync/index.ts';
import type { Database } from './db/database.ts';
import { databaseFile, type OpenedStore, openStore } from './db/openStore.ts';
import { lockDataDirectory } from './db/servingLock.ts';
import type { Store } from './db/store.ts';
import { type Clock, systemClock } from './platform/clock.ts';
import { requireRootKey } from './platform/instanceKeys.ts';
import { defaultSecretStore, type SecretStore } from './platform/secrets.ts';
import { NfcBridge, type NfcBridgeOptions } from './features/nfc/bridge.ts';
import { isDiskFull } from './http/errors.ts';
import { isLoopbackListen } from './features/webhooks/address.ts';

/**
 * How long a client may take (docs/api.md, "Limits"). A client that sends its headers or body a
 * byte at a time is cut off (408) once the headers or the whole request took longer; an idle
 * keep-alive connection is closed. Node's own defaults are 60 s / 300 s, checked every 30 s.
 */
export interface HttpTimeouts {
  /** From the connection (or the end of the previous request) to the end of the headers. */
  headersMs: number;
  /** To the end of the whole request, body included (the remote's sync client gives up after 15 s). */
  requestMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveMs: number;
  /** How often Node checks the two bounds above: a slow request is cut off within bound + this. */
  checkIntervalMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, checkIntervalMs: 1_000 };

export interface ServeOptions {
  host: string;
  port: number;
  dataDir: string;
  /** `--database`: a postgres:// URL puts the data on PostgreSQL (the central tier) instead of `<dataDir>/waymark.sqlite`. */
  database?: string | undefined;
  scanBase?: string | undefined;
  trustProxy?: boolean | undefined;
  /** Folder of the built console (default: the project's out/renderer). */
  consoleDir?: string | undefined;
  /** Pair with a remote instance (`--remote`, `--remote-key`; docs/sync.md). */
  sync?: SyncConfig | undefined;
  /**
   * Where the remote key of a runtime pairing and the instance's own keys are kept (default:
   * `<dataDir>/secrets.json`, mode 0600; Electron encrypts). On PostgreSQL it must hold the
   * operator's root key (`--secrets`), the same for every process.
   */
  secrets?: SecretStore | undefined;
  /** Where tap proof master keys are kept (default: `secrets`); one shared file for every PostgreSQL process. */
  tapProofKeys?: SecretStore | undefined;
  clock?: Clock;
  logger?: Logger;
  /**
   * Webhook delivery settings; unset fields keep their defaults. `publicOnly` unset: on unless
   * the server listens on loopback only (docs/webhooks.md, "Private and loopback receivers").
   */
  webhooks?: Partial<WebhookSettings> | undefined;
  /** Batch generation lease (AppConfig.batchLeaseMs). */
  batchLeaseMs?: number | undefined;
  /** Pruning of the event outbox (AppConfig.outboxPrune). */
  outboxPrune?: AppConfig['outboxPrune'];
  /**
   * Start the NFC reader bridge (a PC/SC child process with a watchdog). `true` starts one with
   * this process's environment; an object passes its options (e.g. PCSCLITE_CSOCK_NAME in env).
   */
  nfc?: boolean | NfcBridgeOptions;
  /** HTTP server timeouts; unset fields keep DEFAULT_HTTP_TIMEOUTS (tests shorten them). */
  httpTimeouts?: Partial<HttpTimeouts> | undefined;
}

export interface RunningServer {
  url: string;
  app: App;
  store: Store;
  /** The SQLite connection, for tests that inspect rows; throws on PostgreSQL (use `store`). */
  readonly db: Database;
  /** Where the data lives (the SQLite file, or the PostgreSQL URL without its password). */
  location: string;
  server: Server;
  /** Set when this start created the default organization: its first key, shown once. */
  firstRun?: { orgId: string; apiKey: string };
  close(): Promise<void>;
}

export { databaseFile };

/** An address phones on the LAN can reach when listening on all interfaces. */
function reachableHost(host: string): string {
  if (host !== '0.0.0.0' && host !== '::') return host.includes(':') ? `[${host}]` : host;
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return '127.0.0.1';
}

/** Opens the data directory, starts the HTTP server and the workers. Used by the CLI and Electron. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? consoleLogger;
  const secrets = options.secrets ?? defaultSecretStore(options.dataDir);
  if (options.database) requireRootKey(secrets);
  const lock = options.database ? null : lockDataDirectory(options.dataDir);
  let opened: OpenedStore;
  try {
    opened = await openStore({ dataDir: options.dataDir, database: options.database });
  } catch (err) {
    lock?.release();
    throw err;
  }
  const { store, sqlite: db } = opened;
  const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...options.httpTimeouts };
  const server = createServer({
    headersTimeout: timeouts.headersMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    connectionsCheckingInterval: timeouts.checkIntervalMs,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
  } catch (err) {
    await opened.close(); // e.g. the port is in use: do not leave the database open behind the error
    lock?.release();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${reachableHost(options.host)}:${port}`;
  const config = makeConfig({
    scanBase: options.scanBase ?? url,
    publicUrl: url,
    trustProxy: options.trustProxy ?? false,
    dataDir: options.dataDir,
    consoleDir: options.consoleDir,
    sync: options.sync,
    webhooks: { ...options.webhooks, publicOnly: options.webhooks?.publicOnly ?? !isLoopbackListen(options.host) },
    batchLeaseMs: options.batchLeaseMs,
    outboxPrune: options.outboxPrune,
  });
  const nfc = options.nfc
    ? new NfcBridge({ log: (m) => logger.info(m), ...(typeof options.nfc === 'object' ? options.nfc : {}) })
    : null;
  nfc?.start();
  const app = await createApp({ store, clock, config, logger, nfc, secrets, ...(options.tapProofKeys ? { tapProofKeys: options.tapProofKeys } : {}) });
  server.on('request', app.handle);

  let firstRun: RunningServer['firstRun'];
  const created = await app.services.keys.createFirstOrgWithKey('Default organization', 'First key');
  if (created) firstRun = { orgId: created.org.id, apiKey: created.apiKey };
  app.start();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      try {
        await app.stop();
      } catch (err) {
        // A full volume refuses what workers write on stop (the sync epoch): committed data is
        // safe, and stopping goes on.
        if (!isDiskFull(err)) throw err;
        logger.error('shutdown: the data volume is full: the last bookkeeping was not written; committed data is safe');
      }
      await nfc?.stop();
      await opened.close();
      lock?.release();
    })());

  return {
    url,
    app,
    store,
    get db(): Database {
      if (!db) throw new Error('This instance runs on PostgreSQL: inspect its rows through `store`');
      return db;
    },
    location: opened.location,
    server,
    ...(firstRun ? { firstRun } : {}),
    close,
  };
}
