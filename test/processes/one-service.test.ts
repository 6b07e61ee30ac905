import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../support/receiver.ts';
import { type ApiResponse, apiRequest, type ServerProcess, spawnServer, tempDataDir } from '../support/server.ts';
import { type ServiceProcesses, START_TIMEOUT_MS, startServiceProcesses } from '../support/processes.ts';
import { needs } from '../support/system.ts';

const pgSkip = needs.postgres();

// Three real `waymark serve --database …` processes on one PostgreSQL database behind a
// round-robin TCP proxy (issue 19: many processes are one service).

/** Attempt timeout of the processes: a sender claim lasts twice as long (docs/webhooks.md). */
const TIMEOUT_MS = 10_000;
/** How long a batch stays with a process that stopped generating it. */
const BATCH_LEASE_MS = 3_000;

describe.skipIf(pgSkip !== null)(`three serve processes on one PostgreSQL database${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  let cluster: ServiceProcesses | undefined;
  const receivers: Receiver[] = [];
  const sites: Site[] = [];

  beforeAll(async () => {
    cluster = await startServiceProcesses(3, { args: ['--webhook-timeout-ms', String(TIMEOUT_MS), '--batch-lease-ms', String(BATCH_LEASE_MS)] });
  }, 180_000);
  afterAll(async () => {
    await Promise.all(sites.map((s) => s.proc.kill()));
    await cluster?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  const remaining = (res: ApiResponse) => Number(res.headers.get('x-ratelimit-remaining'));

  it('refuses the 101st standard request of a minute whichever process answers, and the headers count every process', { timeout: 120_000 }, async () => {
    const c = cluster!;
    const key = await c.createKey('developer');
    // Start with at least 40 s left in the minute: the test must not cross into the next window.
    while (60_000 - (Date.now() % 60_000) < 40_000) await sleep(250);
    const before = c.proxy.assigned.length;
    const accepted: ApiResponse[] = [];
    let refused: ApiResponse | undefined;
    while (!refused) {
      const res = await c.api('GET', '/webhooks?limit=1', undefined, { key });
      if (res.status === 200) {
        accepted.push(res);
      } else if (res.status === 429 && res.headers.get('retry-after') === '1' && remaining(res) > 0) {
        // The burst cap (20 a second): wait for the next second, which charged nothing.
        const second = Math.floor(Date.now() / 1000);
        while (Math.floor(Date.now() / 1000) === second) await sleep(20);
      } else {
        refused = res;
      }
    }
    expect(accepted).toHaveLength(100);
    // One count across the processes: 99, 98, … 0, each once, in the order the requests were made.
    expect(accepted.map(remaining)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    expect(new Set(accepted.map((r) => r.headers.get('x-ratelimit-reset'))).size).toBe(1);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('100');
    expect(remaining(refused)).toBe(0);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(1);
    // The requests were spread over all three processes, and each of them now refuses the key.
    expect(new Set(c.proxy.assigned.slice(before))).toEqual(new Set([0, 1, 2]));
    for (const p of c.processes) expect((await c.api('GET', '/webhooks?limit=1', undefined, { key, base: p.url })).status).toBe(429);
  });

  it('every process answers /metrics from the shared database', { timeout: 60_000 }, async () => {
    for (const p of cluster!.processes) {
      const res = await fetch(`${p.url}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^waymark_outbox_events_total \d+/m);
    }
  });

  it('delivers each webhook event once, in order, whichever process recorded it', { timeout: 120_000 }, async () => {
    const c = cluster!;
    const key = await c.createKey('enterprise');
    const receiver = await new Receiver().listen();
    receivers.push(receiver);
    const created = await c.api('POST', '/webhooks', { url: receiver.url, events: ['node.created'] }, { key });
    expect(created.status).toBe(201);
    const hook = created.body.data.id as string;
    const before = c.proxy.assigned.length;
    // Node events and test events, one request each, spread over the processes: what each
    // receiver request must be, in order (a node by its id, a test event by its webhook-id).
    const expected: string[] = [];
    for (let i = 0; i < 12; i++) {
      if (i % 2 === 0) {
        const res = await c.api('POST', '/nodes', { label: `n${i}`, function_type: 'redirect', payload: { url: `https://example.com/${i}` } }, { key });
        expect(res.status).toBe(201);
        expected.push(`node ${res.body.data.id}`);
      } else {
        const res = await c.api('POST', `/webhooks/${hook}/test`, undefined, { key });
        expect(res.status).toBe(202);
        expected.push(`test ${res.body.data.event_id}`);
      }
    }
    expect(new Set(c.proxy.assigned.slice(before))).toEqual(new Set([0, 1, 2]));

    await receiver.waitFor((r) => r.accepted.length >= 12, 60_000, 'twelve deliveries');
    // Every delivery recorded as done after one attempt, and no attempt still in flight anywhere …
    const deliveries = async () => (await c.api('GET', `/webhooks/${hook}/deliveries?limit=100`, undefined, { key })).body.data as Array<{ status: string; attempt_count: number }>;
    await eventually(async () => (await deliveries()).every((d) => d.status === 'succeeded'), 'every delivery recorded');
    expect((await deliveries()).map((d) => d.attempt_count)).toEqual(Array(12).fill(1));
    await eventually(async () => (await claimsHeld(c.databaseUrl)) === 0, 'no sender claim held');
    // … so the receiver's requests are all there is: each event once, node events in the order
    // recorded and test events in theirs. (A test event is queued with its event, a node event
    // by the fan-out a moment later, so a test may go ahead of a node event recorded just before
    // it: docs/webhooks.md, "Several processes".)
    const got = receiver.requests.map((r) => {
      const body = JSON.parse(r.body) as { type: string; data: { id: string } };
      return body.type === 'node.created' ? `node ${body.data.id}` : `test ${String(r.headers['webhook-id'])}`;
    });
    for (const kind of ['node ', 'test ']) expect(got.filter((g) => g.startsWith(kind))).toEqual(expected.filter((e) => e.startsWith(kind)));
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(12);
  });

  it('a webhook created through one process is signed by the others with the secret it returned (one root key, no data key of their own)', { timeout: 180_000 }, async () => {
    const c = cluster!;
    const key = await c.createKey('enterprise');
    const receiver = await new Receiver().listen();
    receivers.push(receiver);
    const [a, b, d] = c.processes as [ServerProcess, ServerProcess, ServerProcess];
    const created = await c.api('POST', '/webhooks', { url: receiver.url, events: ['node.created'] }, { key, base: a.url });
    expect(created.status).toBe(201);
    const hook = created.body.data.id as string;
    const secret = created.body.data.secret as string;
    // Sealed in the shared database, never in clear.
    const stored = (await query<{ secret: string }>(c.databaseUrl, 'SELECT secret FROM webhooks WHERE id = $1', [hook]))[0]!.secret;
    expect(stored).toMatch(/^enc1:/);
    expect(stored).not.toContain(secret.replace(/^whsec_/, ''));
    // The creating process is gone: only the others can read the endpoint and sign for it.
    await a.kill();
    const sent: string[] = [];
    for (const p of [b, d]) {
      const res = await c.api('POST', `/webhooks/${hook}/test`, undefined, { key, base: p.url });
      expect(res.status).toBe(202);
      sent.push(res.body.data.event_id as string);
    }
    await receiver.waitFor((r) => r.accepted.length >= 2, 60_000, 'both test deliveries');
    for (const r of receiver.requests) {
      expect(new StandardWebhook(secret).verify(r.body, r.headers as Record<string, string>)).toMatchObject({ type: 'webhook.test' });
    }
    expect(receiver.requests.map((r) => r.headers['webhook-id']).sort()).toEqual(sent.sort());
    // A process started later with the same secrets file reads it too.
    const fresh = await c.replace(0);
    const read = await c.api('GET', `/webhooks/${hook}`, undefined, { key, base: fresh.url });
    expect(read.status).toBe(200);
  });

  it('a process on PostgreSQL without the root key refuses to start instead of making keys of its own', { timeout: 120_000 }, async () => {
    const c = cluster!;
    const dir = tempDataDir('waymark-no-root-');
    try {
      const started = spawnServer(dir, [], { WAYMARK_NO_NFC: '1', WAYMARK_SECRETS_FILE: '' }, { database: c.databaseUrl, startTimeoutMs: START_TIMEOUT_MS });
      await expect(started).rejects.toThrow(/no instance\.root_key in the secret store: on PostgreSQL every process is given the same secrets file/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a process killed mid-attempt: another process sends the delivery again under the same webhook-id', { timeout: 120_000 }, async () => {
    const c = cluster!;
    const key = await c.createKey('enterprise');
    let holding = true;
    const receiver = await new Receiver(async () => {
      if (holding) await new Promise<never>(() => {}); // never answers: the sender is killed meanwhile
      return 204;
    }).listen();
    receivers.push(receiver);
    const hook = (await c.api('POST', '/webhooks', { url: receiver.url, events: ['node.created'] }, { key })).body.data.id as string;
    const first = (await c.api('POST', `/webhooks/${hook}/test`, undefined, { key })).body.data.event_id as string;
    await receiver.waitFor((r) => r.requests.length >= 1, 30_000, 'the first attempt');

    // The process holding the endpoint's claim is the one sending: kill it mid-attempt.
    const owner = await eventually(() => claimOwner(c.databaseUrl, hook), 'the sender claim');
    const pid = Number(owner.split(':').at(-2));
    const victim = c.processes.find((p) => p.child.pid === pid);
    expect(victim).toBeDefined();
    await victim!.kill();
    holding = false;

    // A survivor records the next event; its dispatcher finds the head claimed by the dead
    // process and retries it once the claim expires, then sends the new event.
    const survivor = c.processes.find((p) => p !== victim)!;
    const second = (await c.api('POST', `/webhooks/${hook}/test`, undefined, { key, base: survivor.url })).body.data.event_id as string;
    await receiver.waitFor((r) => r.accepted.length >= 2, 4 * TIMEOUT_MS + 30_000, 'the retry and the next event');
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([first, first, second]);
    expect(receiver.accepted.map((r) => r.headers['webhook-id'])).toEqual([first, second]);
    // (the survivor records the second outcome just after the receiver answers)
    const list = await eventually(async () => {
      const data = (await c.api('GET', `/webhooks/${hook}/deliveries?limit=10`, undefined, { key, base: survivor.url })).body.data as Array<{ event_id: string; status: string; attempt_count: number }>;
      return data.every((d) => d.status !== 'pending') ? data : undefined;
    }, 'both outcomes recorded');
    // The dead process's attempt was never recorded: one attempt each, both succeeded.
    expect(list.map((d) => [d.event_id, d.status, d.attempt_count])).toEqual([
      [second, 'succeeded', 1],
      [first, 'succeeded', 1],
    ]);
  });

  it('a 500-node batch whose generating process is SIGKILLed mid-generation is finished once by another process', { timeout: 120_000 }, async () => {
    const c = cluster!;
    const key = await c.createKey('enterprise');
    // A test device in the database, so the kill lands mid-generation however fast or loaded the
    // machine: inserting any node past the batch's 250th waits for an advisory lock this test holds.
    const gate = new pg.Client({ connectionString: c.databaseUrl });
    await gate.connect();
    try {
      await gate.query('SELECT pg_advisory_lock($1)', [GATE_LOCK]);
      await gate.query(`CREATE FUNCTION test_batch_gate() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.batch_id IS NOT NULL AND NEW.serial_number >= (SELECT serial_start FROM batches WHERE id = NEW.batch_id) + 250 THEN
            PERFORM pg_advisory_xact_lock_shared(${GATE_LOCK});
          END IF;
          RETURN NEW;
        END $$`);
      await gate.query('CREATE TRIGGER test_batch_gate BEFORE INSERT ON nodes FOR EACH ROW EXECUTE FUNCTION test_batch_gate()');

      const created = await c.api('POST', '/batches', { label: 'Killed', prefix: 'KILL', quantity: 500, function_type: 'redirect', base_payload: { url: 'https://example.com/k' } }, { key });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const batchId = created.body.data.id as string;
      // The generating process has committed 250 nodes and waits at the gate inside its next chunk.
      await eventually(async () => (await query<{ n: number }>(c.databaseUrl, "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))[0]!.n > 0, 'a chunk at the gate');
      const [held] = await query<{ lease_owner: string; nodes_generated: number }>(c.databaseUrl, 'SELECT lease_owner, nodes_generated::int FROM batches WHERE id = $1', [batchId]);
      expect(held!.nodes_generated).toBe(250);
      const pid = Number(held!.lease_owner.split(':').at(-2));
      const index = c.processes.findIndex((p) => p.child.pid === pid);
      expect(index).toBeGreaterThanOrEqual(0);
      await c.processes[index]!.kill();
      // The dead process's chunk goes on at the gate and is rolled back (its client is gone).
      await gate.query('SELECT pg_advisory_unlock($1)', [GATE_LOCK]);

      // Another process takes the batch over once the lease has run out and finishes it: a survivor
      // (it looks again every 30 s) or, sooner, the process started in the dead one's place.
      const survivor = c.processes.find((_, i) => i !== index)!;
      await replaceDead(c);
      const batch = await eventually(async () => {
        const res = await c.api('GET', `/batches/${batchId}`, undefined, { key, base: survivor.url });
        return res.body.data?.status === 'ready' ? res.body.data : undefined;
      }, 'the batch finished', 90_000);
      expect(batch.nodes_generated).toBe(500);
      const nodes = await query<{ serial_number: number; slug: string }>(c.databaseUrl, 'SELECT serial_number::int, slug FROM nodes WHERE batch_id = $1 ORDER BY serial_number', [batchId]);
      const start = (await query<{ s: number }>(c.databaseUrl, 'SELECT serial_start::int AS s FROM batches WHERE id = $1', [batchId]))[0]!.s;
      // Every serial once, none twice, none missing; a slug each.
      expect(nodes.map((n) => n.serial_number)).toEqual(Array.from({ length: 500 }, (_, i) => start + i));
      expect(new Set(nodes.map((n) => n.slug)).size).toBe(500);
      const [done] = await query<{ lease_owner: string | null }>(c.databaseUrl, 'SELECT lease_owner FROM batches WHERE id = $1', [batchId]);
      expect(done!.lease_owner).toBeNull();
    } finally {
      await gate.query('DROP TRIGGER IF EXISTS test_batch_gate ON nodes; DROP FUNCTION IF EXISTS test_batch_gate()');
      await gate.end();
      await replaceDead(c);
    }
  });

  it('every scan answered while one process is SIGKILLed under load is counted exactly once', { timeout: 120_000 }, async () => {
    const c = cluster!;
    const key = await c.createKey('enterprise');
    // node.scanned events are recorded only for an organization with a subscriber.
    const receiver = await new Receiver().listen();
    receivers.push(receiver);
    expect((await c.api('POST', '/webhooks', { url: receiver.url, events: ['node.scanned'] }, { key })).status).toBe(201);
    const SCANS = 300;
    const KILL_AFTER = 100;
    const created = await c.api('POST', '/batches', { label: 'Scanned', prefix: 'SCAN', quantity: SCANS, function_type: 'redirect', base_payload: { url: 'https://example.com/s' } }, { key });
    expect(created.status).toBe(201);
    const batchId = created.body.data.id as string;
    await eventually(async () => (await c.api('GET', `/batches/${batchId}`, undefined, { key })).body.data?.status === 'ready', 'the batch', 90_000);
    // Deployed: its nodes become active, so a scan redirects.
    expect((await c.api('PATCH', `/batches/${batchId}`, { status: 'deployed' }, { key })).status).toBe(200);
    const nodes = await query<{ id: string; slug: string }>(c.databaseUrl, 'SELECT id, slug FROM nodes WHERE batch_id = $1', [batchId]);
    expect(nodes).toHaveLength(SCANS);
    const idOf = new Map(nodes.map((n) => [n.slug, n.id]));

    const victim = c.processes[0]!;
    const answered: string[] = [];
    let next = 0;
    const kill: { done: Promise<void> | null } = { done: null };
    let answeredAfterKill = 0;
    // Each slug scanned once, through the round-robin proxy, 16 at a time.
    const worker = async () => {
      while (next < nodes.length) {
        const slug = nodes[next++]!.slug;
        const status = await scanOnce(c.url, slug).catch(() => 0); // 0: the connection died with its process
        if (status === 302) {
          answered.push(slug);
          if (kill.done) answeredAfterKill++;
        }
        if (answered.length >= KILL_AFTER && !kill.done) kill.done = victim.kill();
      }
    };
    try {
      await Promise.all(Array.from({ length: 16 }, worker));
      expect(kill.done).not.toBeNull();
      await kill.done;
      expect(answeredAfterKill).toBeGreaterThan(0); // the others went on serving

      const events = await query<{ node_id: string; n: number }>(c.databaseUrl, 'SELECT node_id, count(*)::int AS n FROM scan_events GROUP BY node_id');
      const perNode = new Map(events.map((e) => [e.node_id, e.n]));
      expect(events.filter((e) => e.n !== 1)).toEqual([]); // none twice
      expect(answered.filter((slug) => perNode.get(idOf.get(slug)!) !== 1)).toEqual([]); // every answered one there
      const counts = new Map((await query<{ id: string; scan_count: number }>(c.databaseUrl, 'SELECT id, scan_count::int FROM nodes WHERE batch_id = $1', [batchId])).map((n) => [n.id, n.scan_count]));
      for (const n of nodes) expect(counts.get(n.id)).toBe(perNode.get(n.id) ?? 0);
      const scanned = (await query<{ slug: string }>(c.databaseUrl, "SELECT data_json::jsonb -> 'node' ->> 'slug' AS slug FROM outbox_events WHERE type = 'node.scanned'")).map((e) => e.slug);
      expect(scanned.length).toBe(events.length);
      expect(new Set(scanned).size).toBe(scanned.length);
      for (const slug of answered) expect(scanned).toContain(slug);
      // The processes' folds together count each recorded scan once (the API folds what is pending first).
      const total = events.length;
      const figures = await eventually(async () => {
        // (asked of a survivor: the proxy still sends every third connection to the dead process)
        const res = await c.api('GET', `/analytics?from=2026-01-01&to=${new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}`, undefined, { key, base: c.processes[1]!.url });
        return res.status === 200 ? res.body.data : undefined;
      }, 'the analytics');
      expect(figures.totals).toMatchObject({ scans: total, nodes_scanned: total });
      const [folded] = await query<{ n: number }>(c.databaseUrl, 'SELECT count(*)::int AS n FROM scan_events_by_node');
      expect(folded!.n).toBe(total);
    } finally {
      await replaceDead(c);
    }
  });

  it('max_scans holds across processes: concurrent scans through all of them serve the content exactly max_scans times', { timeout: 120_000 }, async () => {
    const c = cluster!;
    const key = await c.createKey('enterprise');
    const MAX = 20;
    const SCANS = 60;
    const created = await c.api('POST', '/nodes', { label: 'Limited', function_type: 'redirect', payload: { url: 'https://example.com/limited' }, max_scans: MAX }, { key });
    expect(created.status, created.text).toBe(201);
    const slug = created.body.data.slug as string;
    // Every process knows the node before the scans start (HEAD is not a scan: nothing counted).
    for (const p of c.processes) await eventually(async () => (await scanOnce(p.url, slug, 'HEAD')) === 302, `the node at ${p.url}`);
    const before = c.proxy.assigned.length;
    // All at once, each on a connection of its own, so every process has scans of the node in flight together.
    const statuses = await Promise.all(Array.from({ length: SCANS }, () => scanOnce(c.url, slug)));
    expect(new Set(c.proxy.assigned.slice(before))).toEqual(new Set([0, 1, 2]));
    expect(statuses.filter((s) => s === 302)).toHaveLength(MAX);
    expect(statuses.filter((s) => s === 410)).toHaveLength(SCANS - MAX);
    const [node] = await query<{ scan_count: number }>(c.databaseUrl, 'SELECT scan_count::int FROM nodes WHERE slug = $1', [slug]);
    expect(node!.scan_count).toBe(SCANS);
    const outcomes = await query<{ outcome: string; n: number }>(c.databaseUrl, 'SELECT outcome, count(*)::int AS n FROM scan_events e JOIN nodes n ON n.id = e.node_id WHERE n.slug = $1 GROUP BY outcome ORDER BY outcome', [slug]);
    expect(outcomes).toEqual([
      { outcome: 'limit_reached', n: SCANS - MAX },
      { outcome: 'redirect', n: MAX },
    ]);
  });

  it('password attempts are counted once for all processes: five wrong tries in all, then 429 whichever process answers', { timeout: 120_000 }, async () => {
    const c = cluster!;
    const key = await c.createKey('enterprise');
    const created = await c.api('POST', '/nodes', { label: 'Gated', function_type: 'redirect', payload: { url: 'https://example.com/gated' }, password: 'right one' }, { key });
    expect(created.status, created.text).toBe(201);
    const slug = created.body.data.slug as string;
    for (const p of c.processes) await eventually(async () => (await scanOnce(p.url, slug, 'HEAD')) === 200, `the password page at ${p.url}`);
    // Every attempt comes from 127.0.0.1 (the proxy), so all count for one node and address.
    const before = c.proxy.assigned.length;
    const wrong: number[] = [];
    for (let i = 0; i < 9; i++) wrong.push(await postPassword(c.url, slug, `guess ${i}`));
    expect(new Set(c.proxy.assigned.slice(before))).toEqual(new Set([0, 1, 2]));
    expect(wrong).toEqual([403, 403, 403, 403, 403, 429, 429, 429, 429]);
    // The right password too, at every process.
    for (const p of c.processes) expect(await postPassword(p.url, slug, 'right one')).toBe(429);
  });

  it('two sites syncing through different processes converge', { timeout: 240_000 }, async () => {
    const c = cluster!;
    // An organization of their own: the sites pull everything of their organization.
    const remoteKey = await c.createKey('enterprise', await c.createOrg('Sites'));
    // Site A talks to process 1, site B to process 2: each push and pull lands on a different process.
    const [a, b] = await Promise.all([startSite(c.processes[1]!.url, remoteKey), startSite(c.processes[2]!.url, remoteKey)]);
    sites.push(a, b);
    const round = async (site: Site) => expect((await site.api('POST', '/sync/run')).status).toBe(200);
    // Paired, with slugs leased from the remote to mint from.
    for (const site of [a, b]) {
      await eventually(async () => {
        const status = (await site.api('POST', '/sync/run')).body.data as { paired: boolean; reserve: { blocks: number } };
        return status.paired && status.reserve.blocks > 0;
      }, 'pairing and a reserve', 60_000);
    }
    const fromA = await a.api('POST', '/nodes', { label: 'made at A', function_type: 'redirect', payload: { url: 'https://example.com/a' } });
    expect(fromA.status, JSON.stringify(fromA.body)).toBe(201);
    const fromB = await b.api('POST', '/nodes', { label: 'made at B', function_type: 'redirect', payload: { url: 'https://example.com/b' } });
    expect(fromB.status, JSON.stringify(fromB.body)).toBe(201);
    const listing = async (site: Site) => {
      const nodes = (await site.api('GET', '/nodes?limit=100')).body.data as Array<{ id: string; slug: string; label: string }>;
      return nodes.map((n) => `${n.id} ${n.slug} ${n.label}`).sort();
    };
    // B renames A's node once it has it; A must end up with B's name for it.
    await eventually(async () => {
      await round(a);
      await round(b);
      return (await listing(b)).some((n) => n.startsWith(fromA.body.data.id));
    }, "A's node at B");
    expect((await b.api('PATCH', `/nodes/${fromA.body.data.slug}`, { label: 'renamed at B' })).status).toBe(200);
    const converged = await eventually(async () => {
      await round(b);
      await round(a);
      const [la, lb] = await Promise.all([listing(a), listing(b)]);
      return JSON.stringify(la) === JSON.stringify(lb) && la.some((n) => n.endsWith('renamed at B')) && la.length === 2 ? la : undefined;
    }, 'the two sites to converge', 90_000);
    expect(converged).toEqual([`${fromA.body.data.id} ${fromA.body.data.slug} renamed at B`, `${fromB.body.data.id} ${fromB.body.data.slug} made at B`].sort());
    // The remote (any process) holds the same.
    const remote = (await c.api('GET', '/nodes?limit=100', undefined, { key: remoteKey })).body.data as Array<{ id: string; slug: string; label: string }>;
    expect(remote.map((n) => `${n.id} ${n.slug} ${n.label}`).sort()).toEqual(converged);
  });
});

/** The advisory lock the batch test's gate waits on. */
const GATE_LOCK = 4242_0019;

interface Site {
  proc: ServerProcess;
  api: (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
}

/** A site (its own SQLite data) paired with the remote at `remoteUrl`, as `serve --remote … --remote-key …`. */
async function startSite(remoteUrl: string, remoteKey: string): Promise<Site> {
  const dataDir = tempDataDir('waymark-site-');
  const proc = await spawnServer(dataDir, [], { WAYMARK_REMOTE: remoteUrl, WAYMARK_REMOTE_KEY: remoteKey, WAYMARK_NO_NFC: '1' }, { startTimeoutMs: START_TIMEOUT_MS });
  const key = await eventually(() => /^\s+(wmk_[A-Za-z0-9]+)\s*$/m.exec(proc.output())?.[1], 'the site key');
  return {
    proc,
    api: async (method, path, body) => {
      // A polite client: the site key's burst budget is 20 requests a second.
      for (;;) {
        const res = await apiRequest(proc.url, method, path, body, key);
        if (res.status !== 429) return res;
        await sleep(1000 * Number(res.headers.get('retry-after') ?? 1));
      }
    },
  };
}

/** Starts a process in place of each one a test killed. */
async function replaceDead(c: ServiceProcesses): Promise<void> {
  for (let i = 0; i < c.processes.length; i++) {
    const p = c.processes[i]!;
    if (p.child.exitCode !== null || p.child.signalCode !== null) await c.replace(i);
  }
}

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

/** One public scan (or a HEAD) on a connection of its own (so the proxy spreads them); its status. */
function scanOnce(base: string, slug: string, method: 'GET' | 'HEAD' = 'GET'): Promise<number> {
  return scanRequest(base, slug, method);
}

/** The password page's form posted with `password`, on a connection of its own; the status. */
function postPassword(base: string, slug: string, password: string): Promise<number> {
  return scanRequest(base, slug, 'POST', new URLSearchParams({ password }).toString());
}

function scanRequest(base: string, slug: string, method: string, form?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const formHeaders = form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(form)) };
    const req = request(new URL(`/v/${slug}`, base), { method, agent: false, headers: { connection: 'close', 'user-agent': IPHONE, ...formHeaders } });
    req.on('error', reject);
    req.on('response', (res) => {
      res.resume();
      res.on('error', reject);
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.end(form);
  });
}

async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Sender claims not yet released or expired. */
async function claimsHeld(url: string): Promise<number> {
  const rows = await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM webhook_claims WHERE claimed_until > $1', [new Date().toISOString()]);
  return rows[0]!.n;
}

async function claimOwner(url: string, webhookId: string): Promise<string | undefined> {
  const rows = await query<{ owner: string }>(url, 'SELECT owner FROM webhook_claims WHERE webhook_id = $1 AND claimed_until > $2', [webhookId, new Date().toISOString()]);
  return rows[0]?.owner;
}
