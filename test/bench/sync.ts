/**
 * Sync throughput (issue 8), real server processes on loopback (the CLI, as in production):
 *   - baseline: a standalone instance makes the writes locally (no remote): batches of 500 nodes
 *     and single label edits over the API, in writes per second;
 *   - push: a paired site makes the same writes while cut off from the remote (by a proxy in
 *     this process), then the link heals and we time POST /v1/sync/run until nothing is pending:
 *     changes per second arriving at the remote;
 *   - pull: a second site, paired before and cut off as well, pulls all of them from the feed;
 *   - converge: a site offline with BENCH_SYNC_CONVERGE_CHANGES changes (default 10,000 nodes in
 *     batches) and BENCH_SYNC_SCANS scans (default 100,000) comes back: time until the remote
 *     holds every node and every scan and the site has nothing pending.
 * The scans of the last part are written straight into the site's SQLite file while it is
 * stopped (recording 100,000 scans through HTTP would time the scan path, not sync).
 * Push and pull count only when they delivered the content: after the push every node of the
 * site is at the remote with the same slug, label, payload and status (the 2,000 edits
 * included), and after the pull the second site holds exactly the remote's nodes, field for field.
 *
 *   node test/bench/sync.ts     (BENCH_SYNC_BATCHES, default 10 × 500 nodes; BENCH_SYNC_EDITS, default 2,000)
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { openDatabase } from '../../server/db/database.ts';
import { type FaultProxy, startFaultProxy } from '../support/faultProxy.ts';
import { freePort } from '../support/receiver.ts';
import { apiRequest, repoRoot, type ServerProcess, spawnServer, tempDataDir, UNLIMITED } from '../support/server.ts';

const BATCHES = Number(process.env.BENCH_SYNC_BATCHES ?? 10);
const EDITS = Number(process.env.BENCH_SYNC_EDITS ?? 2000);
const CONVERGE_CHANGES = Number(process.env.BENCH_SYNC_CONVERGE_CHANGES ?? 10_000);
const SCANS = Number(process.env.BENCH_SYNC_SCANS ?? 100_000);

const dirs: string[] = [];
const procs = new Set<ServerProcess>();
const proxies: FaultProxy[] = [];

function cli(args: string[]): string {
  const r = spawnSync(process.execPath, [join(repoRoot, 'server', 'cli.ts'), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`waymark ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A data directory with an organization and an enterprise key (the first-run key's 20 req/s burst would time the rate limiter). */
function prepare(): { dir: string; key: string } {
  const dir = tempDataDir('waymark-bench-sync-');
  dirs.push(dir);
  const org = JSON.parse(cli(['org', 'create', '--name', 'Bench', '--data', dir, '--json'])) as { org: { id: string } };
  const key = JSON.parse(cli(['keys', 'create', '--org', org.org.id, '--name', 'bench', '--plan', 'enterprise', '--data', dir, '--json'])) as { key: { id: string }; api_key: string };
  // Enterprise defaults allow 5,000 calls a minute: lift them so the bench times sync, not the limiter.
  const db = openDatabase(join(dir, 'waymark.sqlite')); // registers the functions the capture triggers call
  db.prepare('UPDATE api_keys SET limits_json = ? WHERE id = ?').run(JSON.stringify(UNLIMITED), key.key.id);
  db.close();
  return { dir, key: key.api_key };
}

async function spawn(dir: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const p = await spawnServer(dir, ['--no-nfc', ...args], env);
  procs.add(p);
  return p;
}

async function stop(p: ServerProcess): Promise<void> {
  await p.stop();
  procs.delete(p);
}

interface Node {
  url: string;
  key: string;
  call: (method: string, path: string, body?: unknown) => ReturnType<typeof apiRequest>;
}

function client(url: string, key: string): Node {
  return {
    url,
    key,
    call: async (method, path, body) => {
      const res = await apiRequest(url, method, path, body, key);
      if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
      return res;
    },
  };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 600_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The writes every part makes: batches of 500 nodes, then single label edits. Answers the number of changes. */
async function write(node: Node, batches: number, edits: number, tag: string): Promise<{ changes: number; ms: number }> {
  const started = performance.now();
  const ids: string[] = [];
  for (let b = 0; b < batches; b++) {
    const res = await node.call('POST', '/batches', { label: `${tag}-${b}`, prefix: `${tag}${b}`, quantity: 500, function_type: 'redirect', base_payload: { url: 'https://example.com/b' } });
    ids.push(res.body.data.id);
  }
  for (const id of ids) {
    await waitFor(`batch ${id}`, async () => {
      const s = (await node.call('GET', `/batches/${id}`)).body.data.status;
      if (s === 'failed') throw new Error(`batch ${id} failed`);
      return s === 'ready';
    });
  }
  const slugs: string[] = [];
  for (let offset = 0; slugs.length < Math.min(edits, batches * 500); offset += 100) {
    const page = (await node.call('GET', `/nodes?limit=100&offset=${offset}`)).body.data as Array<{ slug: string }>;
    if (page.length === 0) break;
    slugs.push(...page.map((n) => n.slug));
  }
  for (let i = 0; i < edits; i++) await node.call('PATCH', `/nodes/${slugs[i % slugs.length]}`, { label: `${tag} edit ${i}` });
  return { changes: batches * 500 + edits, ms: performance.now() - started };
}

interface Status {
  pending_changes: number;
  online: boolean | null;
  last_error: string | null;
  paired: boolean;
}
const status = async (n: Node) => (await n.call('GET', '/sync/status')).body.data as Status;
const runRound = async (n: Node) => (await n.call('POST', '/sync/run')).body.data as Status;

function count(dir: string, sql: string): number {
  const db = new BetterSqlite3(join(dir, 'waymark.sqlite'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
}

/** JSON with sorted keys: instances may store the same payload with its keys in another order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/** Every node of an instance, id → the synced fields that the writes set. */
function nodesOf(dir: string): Map<string, string> {
  const db = new BetterSqlite3(join(dir, 'waymark.sqlite'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT id, slug, label, payload_json, status FROM nodes').all() as Array<Record<string, string>>;
    return new Map(rows.map((r) => [r.id!, `${r.slug}|${r.label}|${canonical(JSON.parse(r.payload_json!))}|${r.status}`]));
  } finally {
    db.close();
  }
}

function sameNodes(a: Map<string, string>, b: Map<string, string>): boolean {
  return a.size === b.size && [...a].every(([id, v]) => b.get(id) === v);
}

/** Throws unless every node of `from` is in `to` with the same fields (and, if `exact`, nothing else). */
function expectSameNodes(what: string, from: Map<string, string>, to: Map<string, string>, exact: boolean): void {
  const missing = [...from].filter(([id, v]) => to.get(id) !== v);
  const extra = exact ? [...to.keys()].filter((id) => !from.has(id)) : [];
  if (missing.length || extra.length) {
    throw new Error(`${what}: ${missing.length} of ${from.size} nodes missing or different (first: ${JSON.stringify(missing[0])}), ${extra.length} extra`);
  }
}

/** A remote on a fixed port and a proxy in front of it for each site. */
async function startRemote() {
  const { dir, key } = prepare();
  const port = await freePort();
  // BENCH_SYNC_PROFILE=<dir>: a CPU profile of the remote, written when it stops at the end.
  const profile = process.env.BENCH_SYNC_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_SYNC_PROFILE}` } : {};
  const proc = await spawn(dir, ['--port', String(port)], profile);
  return { dir, key, url: `http://127.0.0.1:${port}`, proc, api: client(`http://127.0.0.1:${port}`, key) };
}

async function startSite(remote: { url: string; key: string }, prepared = prepare()) {
  const proxy = await startFaultProxy(remote.url);
  proxies.push(proxy);
  const proc = await spawn(prepared.dir, [], { WAYMARK_REMOTE: proxy.url, WAYMARK_REMOTE_KEY: remote.key });
  const api = client(proc.url, prepared.key);
  await waitFor('pairing', async () => (await runRound(api)).paired);
  return { ...prepared, proc, proxy, api };
}

/** Runs rounds until `done` holds; answers the milliseconds it took. */
async function syncUntil(site: Node, done: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  let failures = 0;
  for (;;) {
    const t = performance.now();
    const st = await runRound(site);
    if (process.env.BENCH_SYNC_VERBOSE) console.log(`round ${Math.round(performance.now() - t)} ms, pending ${st.pending_changes}, error ${st.last_error}`);
    // A connection lost now and then (a keep-alive socket closed as a request starts) is retried
    // by the next round, as the worker would; only a persistent failure ends the bench.
    if (st.last_error && st.online === false && ++failures > 5) throw new Error(`sync failed: ${st.last_error}`);
    if (await done()) return performance.now() - started;
  }
}

const rate = (n: number, ms: number) => Math.round((n / ms) * 1000).toLocaleString('en-US');
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const rows: string[][] = [];
let remoteProc: ServerProcess | undefined;

try {
  // Baseline: the same writes on a standalone instance.
  const standalone = prepare();
  const sp = await spawn(standalone.dir);
  const base = await write(client(sp.url, standalone.key), BATCHES, EDITS, 'S');
  await stop(sp);
  rows.push(['local writes, standalone (baseline)', `${base.changes.toLocaleString('en-US')} writes`, secs(base.ms), `${rate(base.changes, base.ms)}/s`]);

  const remote = await startRemote();
  remoteProc = remote.proc;
  const probe = await apiRequest(remote.url, 'POST', '/v1/sync/push', {}, remote.key);
  if (probe.status === 404) {
    console.log('push/pull are not on this build (POST /v1/sync/push is 404): only the baseline ran');
  } else {
    // Push: the same writes on a site cut off from the remote, then the link heals. A second
    // site, paired before and cut off too, then pulls them all.
    const a = await startSite(remote);
    const b = await startSite(remote);
    a.proxy.partition();
    b.proxy.partition();
    const local = await write(a.api, BATCHES, EDITS, 'A');
    rows.push(['local writes, paired site offline', `${local.changes.toLocaleString('en-US')} writes`, secs(local.ms), `${rate(local.changes, local.ms)}/s`]);
    const pending = (await status(a.api)).pending_changes;
    a.proxy.heal();
    const pushMs = await syncUntil(a.api, async () => (await status(a.api)).pending_changes === 0);
    const remoteNodes = nodesOf(remote.dir);
    expectSameNodes('push', nodesOf(a.dir), remoteNodes, false);
    const atRemote = remoteNodes.size;
    rows.push(['push to the remote (content checked)', `${pending.toLocaleString('en-US')} changes`, secs(pushMs), `${rate(pending, pushMs)}/s`]);

    const pulledBefore = count(b.dir, 'SELECT COUNT(*) FROM sync_outbox WHERE pulled = 1');
    b.proxy.heal();
    // Done when the site holds what the remote does, field for field: a node count alone is
    // reached before the label edits, which come later in the feed.
    const pullMs = await syncUntil(b.api, async () => count(b.dir, 'SELECT COUNT(*) FROM nodes') >= atRemote && sameNodes(remoteNodes, nodesOf(b.dir)));
    const pulled = count(b.dir, 'SELECT COUNT(*) FROM sync_outbox WHERE pulled = 1') - pulledBefore;
    expectSameNodes('pull', remoteNodes, nodesOf(b.dir), true);
    rows.push(['pull by another site (content checked)', `${pulled.toLocaleString('en-US')} changes`, secs(pullMs), `${rate(pulled, pullMs)}/s`]);

    // Converge: a site offline with CONVERGE_CHANGES changes and SCANS scans.
    const c = await startSite(remote);
    c.proxy.partition();
    await write(c.api, Math.ceil(CONVERGE_CHANGES / 500), 0, 'C');
    await stop(c.proc);
    const db = openDatabase(join(c.dir, 'waymark.sqlite'));
    const nodes = db.prepare("SELECT id, org_id FROM nodes WHERE batch_id IN (SELECT id FROM batches WHERE label LIKE 'C-%')").all() as Array<{ id: string; org_id: string }>;
    const insert = db.prepare(
      `INSERT INTO scan_events (node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash)
       VALUES (?, ?, ?, 'mobile', 'ios', 'Mobile Safari', 'DE', 'qr', NULL, 'redirect', 0, ?)`,
    );
    const t0 = Date.now() - SCANS * 1000;
    db.transaction(() => {
      for (let i = 0; i < SCANS; i++) {
        const n = nodes[i % nodes.length]!;
        insert.run(n.id, n.org_id, t0 + i * 1000, randomUUID().slice(0, 16));
      }
    })();
    db.close();
    const scansBefore = count(remote.dir, 'SELECT COUNT(*) FROM scan_events');
    const nodesBefore = count(remote.dir, 'SELECT COUNT(*) FROM nodes');
    c.proc = await spawn(c.dir, [], { WAYMARK_REMOTE: c.proxy.url, WAYMARK_REMOTE_KEY: remote.key });
    c.api = client(c.proc.url, c.key);
    const changes = (await status(c.api)).pending_changes;
    // Scans recorded over days would have been rolled up as they came; these arrived at once, so
    // let the site's analytics catch up first (its roll-up is not sync's work).
    const maxScan = count(c.dir, 'SELECT MAX(id) FROM scan_events');
    await waitFor('the roll-up', async () => count(c.dir, 'SELECT COALESCE(MAX(last_event), 0) FROM scan_rollup_state') >= maxScan);
    c.proxy.heal();
    const convergeMs = await syncUntil(
      c.api,
      async () =>
        (await status(c.api)).pending_changes === 0 &&
        count(remote.dir, 'SELECT COUNT(*) FROM scan_events') - scansBefore >= SCANS &&
        count(remote.dir, 'SELECT COUNT(*) FROM nodes') - nodesBefore >= nodes.length,
    );
    const pushes = c.proxy.calls.filter((x) => x.path.startsWith('/v1/sync/push') && x.ms !== undefined);
    if (process.env.BENCH_SYNC_VERBOSE) console.log(`converge: ${pushes.length} pushes, ${pushes.reduce((a, x) => a + x.ms!, 0)} ms in push requests`);
    rows.push([
      'offline site converges',
      `${changes.toLocaleString('en-US')} changes + ${SCANS.toLocaleString('en-US')} scans`,
      secs(convergeMs),
      `${rate(changes + SCANS, convergeMs)} rows/s`,
    ]);
  }
} finally {
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), 4));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
  if (process.env.BENCH_SYNC_PROFILE && remoteProc) await stop(remoteProc);
  await Promise.all([...procs].map((p) => p.kill()));
  await Promise.all(proxies.map((p) => p.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
