#!/usr/bin/env node
import { Command, Option } from 'commander';
import { VERSION } from './config.ts';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CopyError, copySqliteToPostgres } from './db/copyToPostgres.ts';
import { databaseFile, openStore, type OpenedStore } from './db/openStore.ts';
import type { PostgresStore } from './db/postgresStore.ts';
import { KeysRepo } from './features/keys/repo.ts';
import { KeyService } from './features/keys/service.ts';
import { systemClock } from './platform/clock.ts';
import { keepRunningWhenOutputFails } from './platform/output.ts';
import { InstanceKeys, ROOT_KEY_SECRET, requireRootKey, rootKeyOf } from './platform/instanceKeys.ts';
import { defaultSecretStore, FileSecretStore, type SecretStore } from './platform/secrets.ts';
import { MasterKeys, NTAG424_KIND } from './features/tapproofs/index.ts';
import { TagPasswords } from './features/nfc/index.ts';
import { AppError } from './platform/errors.ts';
import { PLANS, type Plan } from './schemas/common.ts';
import { startServer } from './serve.ts';

const program = new Command()
  .name('waymark')
  .description('Waymark: permanent scan URLs for QR codes and NFC tags, served offline.')
  .version(VERSION);

const dataOption = () => new Option('--data <dir>', 'data directory').env('WAYMARK_DATA').default('./data');
const databaseOption = () =>
  new Option('--database <url>', 'PostgreSQL URL (postgres://…): the data lives there instead of <data>/waymark.sqlite (the central tier)').env(
    'WAYMARK_DATABASE',
  );
const secretsOption = () =>
  new Option(
    '--secrets <file>',
    'the secrets file (JSON, mode 0600) holding the root key every process of a PostgreSQL instance shares (waymark secrets init; docs/deploy.md). Default: <data>/secrets.json',
  ).env('WAYMARK_SECRETS_FILE');
/** The secret store of `--secrets`, or the data directory's. */
const secretStoreOf = (opts: { data: string; secrets?: string | undefined }): SecretStore => (opts.secrets ? new FileSecretStore(opts.secrets) : defaultSecretStore(opts.data));
// Boolean flags read their WAYMARK_* variable through envFlag, not commander's .env(): commander
// turns a boolean flag on whenever the variable is set, so WAYMARK_TRUST_PROXY=false enabled it.
const jsonOption = () => new Option('--json', 'print one JSON line (env: WAYMARK_JSON)');

program
  .command('serve')
  .description('run the API, scan URLs and console')
  .addOption(new Option('--host <host>', 'address to listen on').env('WAYMARK_HOST').default('127.0.0.1'))
  .addOption(new Option('--port <port>', 'port (0 picks a free one)').env('WAYMARK_PORT').default('8787').argParser(parsePort))
  .addOption(dataOption())
  .addOption(databaseOption())
  .addOption(new Option('--scan-base <url>', 'public address printed on tags (default: the listening URL)').env('WAYMARK_SCAN_BASE'))
  .addOption(new Option('--trust-proxy', 'honour X-Forwarded-For and CF-IPCountry from a reverse proxy (env: WAYMARK_TRUST_PROXY)'))
  .addOption(
    new Option(
      '--webhooks-allow-private',
      'accept webhook receivers on private, loopback and link-local addresses although listening beyond loopback (env: WAYMARK_WEBHOOKS_ALLOW_PRIVATE)',
    ),
  )
  .addOption(
    new Option('--webhooks-public-only', 'refuse private and loopback webhook receivers even when listening on loopback only (env: WAYMARK_WEBHOOKS_PUBLIC_ONLY)'),
  )
  .addOption(new Option('--no-nfc', 'do not start the NFC reader bridge (PC/SC) (env: WAYMARK_NO_NFC)'))
  .addOption(
    new Option('--webhook-retry-base-ms <ms>', 'first webhook retry delay; later ones scale from it (tests)')
      .env('WAYMARK_WEBHOOK_RETRY_BASE_MS')
      .argParser(parseMs)
      .hideHelp(),
  )
  .addOption(
    new Option('--webhook-timeout-ms <ms>', 'webhook attempt timeout; a sender claim lasts twice as long (tests)')
      .env('WAYMARK_WEBHOOK_TIMEOUT_MS')
      .argParser(parseMs)
      .hideHelp(),
  )
  .addOption(
    new Option('--batch-lease-ms <ms>', 'how long a batch stays with a process that stopped generating it before another takes over (tests)')
      .env('WAYMARK_BATCH_LEASE_MS')
      .argParser(parseMs)
      .hideHelp(),
  )
  .addOption(
    new Option('--event-retention-days <days>', 'keep delivered webhook events at least this long before pruning them (docs/deploy.md)')
      .env('WAYMARK_EVENT_RETENTION_DAYS')
      .default(7)
      .argParser(parseDays),
  )
  .addOption(
    new Option('--sync-retention-days <days>', 'keep superseded sync changes this long before compacting them (docs/sync.md)')
      .env('WAYMARK_SYNC_RETENTION_DAYS')
      .default(30)
      .argParser(parseDays),
  )
  .addOption(
    new Option('--prune-every-ms <ms>', 'how often the event outbox is pruned and the sync outbox compacted (tests)')
      .env('WAYMARK_PRUNE_EVERY_MS')
      .argParser(parseMs)
      .hideHelp(),
  )
  .addOption(
    new Option('--tap-proof-keys <file>', 'the file of NFC tap proof master keys (JSON, mode 0600); every process of a PostgreSQL instance is given the same one (docs/nfc.md). Default: <data>/secrets.json').env(
      'WAYMARK_TAP_PROOF_KEYS',
    ),
  )
  .addOption(secretsOption())
  .addOption(new Option('--remote <url>', 'pair this site with a remote Waymark instance (docs/sync.md)').env('WAYMARK_REMOTE'))
  .addOption(new Option('--remote-key <key>', 'API key of the organization on the remote').env('WAYMARK_REMOTE_KEY'))
  .action(async (opts: {
    host: string;
    port: number | string;
    data: string;
    database?: string;
    scanBase?: string;
    trustProxy?: boolean;
    webhooksPublicOnly?: boolean;
    webhooksAllowPrivate?: boolean;
    webhookRetryBaseMs?: number;
    webhookTimeoutMs?: number;
    batchLeaseMs?: number;
    eventRetentionDays: number | string;
    syncRetentionDays: number | string;
    pruneEveryMs?: number;
    tapProofKeys?: string;
    secrets?: string;
    nfc?: boolean;
    remote?: string;
    remoteKey?: string;
  }) => {
    if (opts.scanBase !== undefined && !/^https?:\/\/[^/\s]+(\/[^\s]*)?$/i.test(opts.scanBase)) {
      fail('--scan-base must be an http(s) URL such as https://w.example.com');
    }
    if (opts.remote !== undefined && !/^https?:\/\/[^/\s]+\/?$/i.test(opts.remote)) fail('--remote must be an http(s) origin such as https://waymark.example.com');
    if (opts.remoteKey !== undefined && opts.remote === undefined) fail('--remote-key needs --remote');
    const port = typeof opts.port === 'string' ? parsePort(opts.port) : opts.port;
    checkDatabaseUrl(opts.database);
    keepRunningWhenOutputFails();
    const trustProxy = opts.trustProxy === true || envFlag('WAYMARK_TRUST_PROXY');
    const publicOnly = opts.webhooksPublicOnly === true || envFlag('WAYMARK_WEBHOOKS_PUBLIC_ONLY');
    const allowPrivate = opts.webhooksAllowPrivate === true || envFlag('WAYMARK_WEBHOOKS_ALLOW_PRIVATE');
    if (publicOnly && allowPrivate) fail('--webhooks-public-only and --webhooks-allow-private contradict each other');
    const webhooks = {
      // Unset: refused unless listening on loopback only (serve.ts).
      publicOnly: publicOnly ? true : allowPrivate ? false : undefined,
      retryBaseMs: opts.webhookRetryBaseMs,
      timeoutMs: opts.webhookTimeoutMs,
    };
    let running: Awaited<ReturnType<typeof startServer>>;
    try {
      const nfc = opts.nfc !== false && !envFlag('WAYMARK_NO_NFC');
      running = await startServer({
        host: opts.host,
        port,
        dataDir: opts.data,
        database: opts.database,
        scanBase: opts.scanBase,
        trustProxy,
        webhooks,
        batchLeaseMs: opts.batchLeaseMs,
        outboxPrune: { retentionMs: daysToMs(opts.eventRetentionDays), everyMs: opts.pruneEveryMs },
        nfc,
        ...(opts.tapProofKeys ? { tapProofKeys: new FileSecretStore(opts.tapProofKeys) } : {}),
        secrets: secretStoreOf(opts),
        sync: {
          remoteUrl: opts.remote,
          remoteKey: opts.remoteKey,
          prune: { retentionMs: daysToMs(opts.syncRetentionDays), ...(opts.pruneEveryMs !== undefined ? { everyMs: opts.pruneEveryMs } : {}) },
        },
      });
    } catch (err) {
      fail(startupError(err, opts.host, port, opts.database ? 'the database' : `data directory ${opts.data}`));
    }
    const site = running.app.services.sync.site;
    // Paired by flags, or earlier at runtime (POST /v1/sync/pair) with the key in the secret store.
    if (site.remoteUrl) {
      const key = opts.remoteKey ? '' : site.canSync() ? ' (stored key)' : ' (no --remote-key and no stored key: offline)';
      console.log(`Paired with remote ${site.remoteUrl}${key}`);
    }
    console.log(`Waymark ${VERSION} listening on ${running.url}`);
    console.log(`Data: ${running.location}`);
    // One line, before the console link: a label or tag printed now must open on a phone.
    const loopback = await running.app.services.organizations.loopbackScanBase();
    if (loopback) {
      console.log(
        `Warning: the scan base ${loopback} is a loopback address: phones cannot open its scan URLs, so labels and NFC writes are refused. ` +
          'Set a scan domain with --scan-base https://w.example.com (or WAYMARK_SCAN_BASE), or per organization in the console (Settings).',
      );
    }
    if (running.firstRun) {
      console.log('');
      console.log('Created the default organization. Its API key (shown only this once):');
      console.log(`  ${running.firstRun.apiKey}`);
      console.log(`Console: ${running.url}/console/#key=${running.firstRun.apiKey}`);
    } else {
      console.log(`Console: ${running.url}/console/`);
    }
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      console.log(`${signal}: shutting down`);
      running.close().then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
    };
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
  });

const org = program.command('org').description('organizations');
org
  .command('create')
  .description('create an organization and its first API key')
  .requiredOption('--name <name>', 'organization name')
  .addOption(dataOption())
  .addOption(databaseOption())
  .addOption(jsonOption())
  .action(async (opts: { name: string; data: string; database?: string; json?: boolean }) => {
    const name = nonBlank(opts.name, '--name');
    const json = opts.json === true || envFlag('WAYMARK_JSON');
    await withKeys(opts, async (keys) => {
      const { org: created, apiKey } = await keys.createOrgWithKey(name, 'First key');
      if (json) {
        console.log(JSON.stringify({ org: { id: created.id, name: created.name }, api_key: apiKey }));
      } else {
        console.log(`Organization ${created.name} (${created.id})`);
        console.log(`API key (shown only this once): ${apiKey}`);
      }
    });
  });

org
  .command('list')
  .description('list the organizations: id, name, active keys')
  .addOption(dataOption())
  .addOption(databaseOption())
  .addOption(jsonOption())
  .action(async (opts: { data: string; database?: string; json?: boolean }) => {
    const json = opts.json === true || envFlag('WAYMARK_JSON');
    await withKeys(opts, async (keys) => {
      const orgs = await keys.listOrgs();
      if (json) {
        console.log(JSON.stringify({ orgs: orgs.map((o) => ({ id: o.id, name: o.name, created_at: o.created_at, active_keys: o.active_keys })) }));
        return;
      }
      if (orgs.length === 0) {
        console.log('No organizations yet (waymark serve creates the first one).');
        return;
      }
      const idWidth = Math.max(2, ...orgs.map((o) => o.id.length));
      const nameWidth = Math.max(4, ...orgs.map((o) => o.name.length));
      console.log(`${'ID'.padEnd(idWidth)}  ${'NAME'.padEnd(nameWidth)}  KEYS`);
      for (const o of orgs) console.log(`${o.id.padEnd(idWidth)}  ${o.name.padEnd(nameWidth)}  ${o.active_keys}`);
    });
  });

const tapKeys = program.command('tap-keys').description('master keys of NFC tap proofs (NTAG 424 DNA, docs/nfc.md "Keys")');
tapKeys
  .command('rotate')
  .description('add a new random master key version and make it current; tags keyed from older versions keep verifying and are re-keyed when written again')
  .requiredOption('--org <id>', 'organization id (waymark org list)')
  .addOption(new Option('--kind <kind>', 'ntag424: the NTAG 424 DNA master key; ntag21x: the NTAG21x password master key').choices(['ntag424', 'ntag21x']).default('ntag424'))
  .addOption(dataOption())
  .addOption(new Option('--tap-proof-keys <file>', 'the key file given to `serve --tap-proof-keys` (default: <data>/secrets.json)').env('WAYMARK_TAP_PROOF_KEYS'))
  .addOption(secretsOption())
  .action((opts: { org: string; kind: 'ntag424' | 'ntag21x'; data: string; tapProofKeys?: string; secrets?: string }) => {
    const file = opts.tapProofKeys ?? opts.secrets ?? join(opts.data, 'secrets.json');
    const org = nonBlank(opts.org, '--org');
    const store = new FileSecretStore(file);
    // On PostgreSQL the NTAG21x version 1 the servers use is derived from the root key: kept as version 1.
    const root = rootKeyOf(opts.secrets ? new FileSecretStore(opts.secrets) : store);
    const version = opts.kind === 'ntag21x' ? new TagPasswords(new InstanceKeys(store, root)).rotate(org) : new MasterKeys(store).rotate(NTAG424_KIND, org).version;
    // The key itself is never printed: it stays in the file.
    console.log(`${opts.kind === 'ntag21x' ? 'NTAG21x password master' : 'Master'} key version ${version} is now current for organization ${opts.org} in ${file}.`);
    console.log('Servers read it within 10 s. Older versions stay in the file: keep them while tags keyed from them are in use.');
  });

const secretsCommand = program.command('secrets').description('the secrets file of a PostgreSQL instance (docs/deploy.md)');
secretsCommand
  .command('init')
  .description('write a new secrets file (mode 0600) with a random root key, to give every `serve --database` process with --secrets')
  .requiredOption('--file <file>', 'where to write it (refused if it exists)')
  .action((opts: { file: string }) => {
    if (existsSync(opts.file)) fail(`${opts.file} exists: every process must keep using the same root key (docs/deploy.md)`);
    new FileSecretStore(opts.file).set(ROOT_KEY_SECRET, randomBytes(32).toString('hex'));
    // The key itself is never printed: it stays in the file.
    console.log(`Wrote ${opts.file} with a new root key. Give the same file to every process (--secrets ${opts.file}) and back it up apart from the database.`);
  });

const keysCommand = program.command('keys').description('API keys');
keysCommand
  .command('create')
  .description('create an API key for an organization (also the way back in when a key is lost)')
  .requiredOption('--org <id-or-name>', 'organization id, or its exact name (waymark org list)')
  .requiredOption('--name <name>', 'key name')
  .addOption(new Option('--plan <plan>', 'rate-limit plan').choices(PLANS).default('developer'))
  .addOption(new Option('--admin', 'an instance-admin key: may also pair the instance with a remote and see its data directory'))
  .addOption(dataOption())
  .addOption(databaseOption())
  .addOption(jsonOption())
  .action(async (opts: { org: string; name: string; plan: Plan; admin?: boolean; data: string; database?: string; json?: boolean }) => {
    const name = nonBlank(opts.name, '--name');
    const json = opts.json === true || envFlag('WAYMARK_JSON');
    await withKeys(opts, async (keys) => {
      const matches = await keys.findOrgs(opts.org);
      if (matches.length === 0) fail(`organization ${opts.org} not found (waymark org list shows them)`);
      if (matches.length > 1) fail(`${matches.length} organizations are named ${opts.org}: give the id instead (${matches.map((o) => o.id).join(', ')})`);
      const { key, apiKey } = await keys.createKey(matches[0]!.id, name, opts.plan, undefined, undefined, { admin: opts.admin === true });
      if (json) {
        console.log(JSON.stringify({ key: { id: key.id, name: key.name, plan: key.plan, admin: key.admin === 1 }, api_key: apiKey }));
      } else {
        console.log(`Key ${key.name} (${key.id}, plan ${key.plan}${key.admin ? ', instance admin' : ''})`);
        console.log(`API key (shown only this once): ${apiKey}`);
      }
    });
  });

program
  .command('export')
  .description('write a whole organization (nodes with their limits and rules, templates, batches, webhooks; no secrets) as one JSON document to stdout (docs/backup.md)')
  .requiredOption('--org <id-or-name>', 'organization id, or its exact name (waymark org list)')
  .addOption(dataOption())
  .addOption(databaseOption())
  .addOption(secretsOption())
  .action(async (opts: { org: string; data: string; database?: string; secrets?: string }) => {
    const opened = await openData(opts);
    try {
      const org = await oneOrg(opened, opts.org);
      const { createBackupServices, exportOrganization } = await backupModules();
      const services = createBackupServices(opened.store, systemClock, defaultScanBase(), secretStoreOf(opts));
      for await (const chunk of exportOrganization(services, org, new Date())) {
        // Waits while stdout is full: a large organization is written at constant memory.
        if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
      }
    } finally {
      await opened.close();
    }
  });

program
  .command('import')
  .description('read a document written by waymark export --org into an empty organization, all or nothing (docs/backup.md)')
  .requiredOption('--org <id-or-name>', 'the organization to fill: it must have no nodes, templates, batches or webhooks yet (waymark org create)')
  .addOption(new Option('--file <path>', 'the document (default: stdin)'))
  .addOption(new Option('--scan-base <url>', 'the scan base of the server that will serve this data, for the node URLs in the node.created events').env('WAYMARK_SCAN_BASE'))
  .addOption(dataOption())
  .addOption(databaseOption())
  .addOption(secretsOption())
  .addOption(jsonOption())
  .action(async (opts: { org: string; file?: string; scanBase?: string; data: string; database?: string; secrets?: string; json?: boolean }) => {
    const json = opts.json === true || envFlag('WAYMARK_JSON');
    let document: unknown;
    try {
      document = JSON.parse(readFileSync(opts.file ?? 0, 'utf8'));
    } catch (err) {
      fail(`cannot read ${opts.file ?? 'stdin'} as JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    // The new webhooks are sealed under the servers' data key: on PostgreSQL, the one of the shared root key.
    const secrets = secretStoreOf(opts);
    if (opts.database) checkRootKey(secrets);
    const opened = await openData(opts);
    try {
      const org = await oneOrg(opened, opts.org);
      const { createBackupServices, importOrganization, BACKUP_OMITTED } = await backupModules();
      const services = createBackupServices(opened.store, systemClock, opts.scanBase ?? defaultScanBase(), secrets);
      const report = await importOrganization(opened.store, services, org.id, document).catch((err: unknown) => {
        if (!(err instanceof AppError)) fail(`nothing was imported: ${err instanceof Error ? err.message : String(err)}`);
        const details = Object.entries(err.details ?? {}).map(([field, message]) => `\n  ${field}: ${message}`);
        fail(`nothing was imported: ${err.message}${details.slice(0, 50).join('')}${details.length > 50 ? `\n  … and ${details.length - 50} more` : ''}`);
      });
      if (json) {
        console.log(JSON.stringify({ organization: org, ...report, omitted: BACKUP_OMITTED }));
        return;
      }
      console.log(`Imported into ${org.name} (${org.id}): ${report.templates} templates, ${report.batches} batches, ${report.nodes} nodes, ${report.rules} rules, ${report.webhooks.length} webhooks.`);
      if (report.webhooks.length > 0) {
        console.log('Each webhook has a new signing secret (shown only this once): give it to its receiver.');
        for (const w of report.webhooks) console.log(`  ${w.url} (${w.id}): ${w.secret}`);
      }
      console.log('Not in the document, set them again if you need them:');
      for (const line of BACKUP_OMITTED) console.log(`  - ${line}`);
    } finally {
      await opened.close();
    }
  });

program
  .command('migrate')
  .description('move an instance from its SQLite data directory to an empty PostgreSQL database (docs/deploy.md)')
  .requiredOption('--from-data <dir>', 'the data directory whose waymark.sqlite is copied (stop its server first)')
  .addOption(databaseOption().makeOptionMandatory())
  .addOption(
    new Option(
      '--secrets <file>',
      "the secrets file the PostgreSQL servers will be given: the data directory's secrets (the webhook data key, NFC master keys) are copied into it, and a root key added if it has none. Default: <from-data>/secrets.json",
    ).env('WAYMARK_SECRETS_FILE'),
  )
  .addOption(jsonOption())
  .action(async (opts: { fromData: string; database: string; secrets?: string; json?: boolean }) => {
    checkDatabaseUrl(opts.database);
    const json = opts.json === true || envFlag('WAYMARK_JSON');
    const file = databaseFile(opts.fromData);
    if (!existsSync(file)) fail(`no Waymark data in ${opts.fromData} (${file} does not exist)`);
    const source = await openData({ data: opts.fromData });
    const target = await openData({ data: opts.fromData, database: opts.database });
    try {
      const report = await copySqliteToPostgres(source.sqlite!, (target.store as PostgresStore).pool);
      // The copied rows are sealed under the data directory's keys: the servers must have them.
      const secretsFile = opts.secrets ?? join(opts.fromData, 'secrets.json');
      const secrets = carrySecrets(join(opts.fromData, 'secrets.json'), secretsFile);
      if (json) console.log(JSON.stringify({ ...report, secrets }));
      else {
        for (const t of report.tables) if (t.rows > 0) console.log(`${t.table}: ${t.rows}`);
        console.log(`Copied ${report.rows} rows from ${file} to ${target.location}.`);
        console.log(`${secretsFile}: ${secrets.copied} secrets copied${secrets.rootKeyAdded ? ', a root key added' : ''}. Start every server with --database and --secrets ${secretsFile}.`);
      }
    } catch (err) {
      fail(err instanceof CopyError ? err.message : `migration failed, nothing was copied: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      await target.close();
      await source.close();
    }
  });

/** Fails with the reason when `store` has no root key (a CLI command writing sealed rows on PostgreSQL). */
function checkRootKey(store: SecretStore): void {
  try {
    requireRootKey(store);
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }
}

/**
 * Copies every entry of the data directory's secrets file into `to` (entries `to` already has are
 * kept), and adds a root key if it has none, so keys kept before take precedence over derived ones.
 */
function carrySecrets(from: string, to: string): { copied: number; rootKeyAdded: boolean } {
  const source = existsSync(from) && resolve(from) !== resolve(to) ? (JSON.parse(readFileSync(from, 'utf8')) as Record<string, unknown>) : {};
  const target = new FileSecretStore(to);
  let copied = 0;
  for (const [name, value] of Object.entries(source)) {
    if (typeof value !== 'string' || target.get(name) !== null) continue;
    target.set(name, value);
    copied++;
  }
  const rootKeyAdded = target.get(ROOT_KEY_SECRET) === null;
  if (rootKeyAdded) target.set(ROOT_KEY_SECRET, randomBytes(32).toString('hex'));
  return { copied, rootKeyAdded };
}

/** One line saying why the server could not start (a port in use, an unusable data directory or database). */
function startupError(err: unknown, host: string, port: number, data: string): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.syscall === 'listen') {
    if (e.code === 'EADDRINUSE') return `port ${port} on ${host} is already in use (choose another with --port)`;
    if (e.code === 'EACCES') return `not allowed to listen on ${host}:${port}`;
    if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND') return `${host} is not an address of this machine`;
    return `cannot listen on ${host}:${port}: ${e.message}`;
  }
  return `cannot use ${data}: ${err instanceof Error ? err.message : String(err)}`;
}

function checkDatabaseUrl(url: string | undefined): void {
  if (url !== undefined && url !== '' && !/^postgres(ql)?:\/\/\S+$/i.test(url)) fail('--database must be a postgres:// or postgresql:// URL');
}

/** Opens the instance's data (`--database`, else the data directory), or fails with one line. */
async function openData(opts: { data: string; database?: string | undefined }): Promise<OpenedStore> {
  checkDatabaseUrl(opts.database);
  try {
    return await openStore({ dataDir: opts.data, database: opts.database });
  } catch (err) {
    const what = opts.database ? 'the database' : `data directory ${opts.data}`;
    fail(`cannot use ${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The one organization `ref` (an id or an exact name) names, or a one-line failure. */
async function oneOrg(opened: OpenedStore, ref: string): Promise<{ id: string; name: string }> {
  const matches = await new KeyService(opened.store, new KeysRepo(), systemClock).findOrgs(ref);
  if (matches.length === 0) fail(`organization ${ref} not found (waymark org list shows them)`);
  if (matches.length > 1) fail(`${matches.length} organizations are named ${ref}: give the id instead (${matches.map((o) => o.id).join(', ')})`);
  return { id: matches[0]!.id, name: matches[0]!.name };
}

/** Loaded by export and import only: the other commands do not pay for every feature at start-up. */
async function backupModules() {
  const [{ createBackupServices }, { exportOrganization, importOrganization }, { BACKUP_OMITTED }] = await Promise.all([
    import('./backupServices.ts'),
    import('./features/backup/index.ts'),
    import('./schemas/organizationBackup.ts'),
  ]);
  return { createBackupServices, exportOrganization, importOrganization, BACKUP_OMITTED };
}

/** What `waymark serve` uses without --scan-base: the node URLs of its events. */
function defaultScanBase(): string {
  return process.env.WAYMARK_SCAN_BASE || 'http://127.0.0.1:8787';
}

async function withKeys(opts: { data: string; database?: string | undefined }, run: (keys: KeyService) => Promise<void>): Promise<void> {
  const opened = await openData(opts);
  try {
    await run(new KeyService(opened.store, new KeysRepo(), systemClock));
  } finally {
    await opened.close();
  }
}

/** A boolean WAYMARK_* variable: 1/true/yes/on or 0/false/no/off (unset or empty: off). */
function envFlag(name: string): boolean {
  const value = (process.env[name] ?? '').trim();
  if (value === '' || /^(0|false|no|off)$/i.test(value)) return false;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  fail(`${name} must be true or false (got ${JSON.stringify(value)})`);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) fail(`invalid port: ${value}`);
  return port;
}

function parseMs(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) fail(`invalid number of milliseconds: ${value}`);
  return Number(value);
}

/** A number of days, fractions allowed (0: no wait beyond what the rules keep). */
function parseDays(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value.trim())) fail(`invalid number of days: ${value}`);
  return Number(value);
}

/** Days (a default is a number, a flag or variable a string commander already parsed) to milliseconds. */
function daysToMs(days: number | string): number {
  return Math.round((typeof days === 'string' ? parseDays(days) : days) * 86_400_000);
}

function nonBlank(value: string, flag: string): string {
  if (value.trim() === '') fail(`${flag} must not be empty`);
  return value;
}

function fail(message: string): never {
  console.error(`waymark: ${message}`);
  process.exit(2);
}

await program.parseAsync(process.argv);
