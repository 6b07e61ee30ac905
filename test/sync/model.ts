import fc from 'fast-check';
import { ManualClock } from '../../server/platform/clock.ts';
import type { FaultAction } from '../support/faultProxy.ts';
import { type Cluster, diffStates, fingerprint, type Instance, startCluster, syncedState } from './cluster.ts';

/*
 * The model-based sync test (docs/sync.md "Tests to build"): random writes on a remote and
 * several sites, random partitions, faults on the wire, restarts and clock ticks; then heal
 * everything, sync until quiet and check the invariants. Shared by model.test.ts (random runs)
 * and regressions.test.ts (the seeds those runs found).
 */

export const SITES = 3;
/** Actor 0 is the remote, 1..SITES the sites. */
const actor = fc.integer({ min: 0, max: SITES });
const site = fc.integer({ min: 1, max: SITES });

type Kind = 'node' | 'rule' | 'template' | 'webhook';

interface Entity {
  kind: Kind;
  id: string;
  /** Nodes: their slug; rules: their node's slug. */
  slug?: string;
  /** Rules: their node. */
  nodeId?: string;
}

export interface Model {
  step: number;
  entities: Entity[];
  /** Entity id → step of its first delete anywhere (a node's delete also ends its rules). */
  deletedAt: Map<string, number>;
  /** Every slug any instance minted, in order (duplicates would be a bug). */
  minted: string[];
  tombstoned: Set<string>;
  /** Node id → scans recorded by the instances where they happened. */
  scans: Map<string, number>;
  /** Ids of entities written (edit, or a rule created/edited) after their delete: one conflict each. */
  editsAfterDelete: string[];
  /** Every successful write (edit, rule creation) with its step, to bound the conflict log from above. */
  writes: Array<{ id: string; nodeId?: string; step: number }>;
  log: string[];
}

interface Real {
  cluster: Cluster;
}

const instanceOf = (r: Real, i: number): Instance => (i === 0 ? r.cluster.remote : r.cluster.sites[i - 1]!);
const pick = <T>(list: T[], n: number): T | undefined => (list.length === 0 ? undefined : list[n % list.length]);
const ok = (status: number) => status >= 200 && status < 300;
/** Adds what a step resolved to (entity numbers, statuses) to its line in the log. */
const note = (m: Model, text: string) => (m.log[m.log.length - 1] += ` ${text}`);
const nameOf = (m: Model, e: Entity) => `${e.kind}#${m.entities.indexOf(e)}`;
const wasDeleted = (m: Model, e: Entity) => m.deletedAt.has(e.id) || (e.nodeId !== undefined && m.deletedAt.has(e.nodeId));

/** A command: its label (fast-check prints it in the failing path) and what it does. */
function step(label: string, apply: (m: Model, r: Real) => Promise<void>): fc.AsyncCommand<Model, Real> {
  return {
    check: () => true,
    run: async (m, r) => {
      m.step++;
      m.log.push(`${m.step}: ${label}`);
      await apply(m, r);
      // Every step is 1 ms later than the previous one, so HLC order follows step order.
      await r.cluster.tick(1);
    },
    toString: () => label,
  };
}

function create(who: number, kind: Kind, ref: number) {
  return step(`create ${kind} @${who}${kind === 'rule' ? ` on #${ref}` : ''}`, async (m, r) => {
    const inst = instanceOf(r, who);
    const tag = `${kind}-${m.step}`;
    if (kind === 'node') {
      const res = await inst.api('POST', '/nodes', { label: tag, function_type: 'redirect', payload: { url: `https://example.com/${tag}` } });
      if (res.status !== 201) throw new Error(`create node: ${res.status} ${res.text}`);
      m.entities.push({ kind: 'node', id: res.body.data.id, slug: res.body.data.slug });
      m.minted.push(res.body.data.slug);
      note(m, `→ node#${m.entities.length - 1}`);
    } else if (kind === 'rule') {
      const node = pick(m.entities.filter((e) => e.kind === 'node'), ref);
      if (!node) return;
      const res = await inst.api('POST', `/nodes/${node.slug}/rules`, {
        rule_type: 'device_based',
        conditions: { devices: ['mobile'] },
        function_type: 'redirect',
        payload: { url: `https://example.com/${tag}` },
      });
      note(m, `(${nameOf(m, node)}) ${res.status}`);
      if (!ok(res.status)) return; // the node is not (or no longer) known here
      const rule: Entity = { kind: 'rule', id: res.body.data.id, slug: node.slug!, nodeId: node.id };
      m.entities.push(rule);
      note(m, `→ rule#${m.entities.length - 1}`);
      m.writes.push({ id: rule.id, nodeId: node.id, step: m.step });
      if (m.deletedAt.has(node.id)) m.editsAfterDelete.push(rule.id);
    } else if (kind === 'template') {
      const res = await inst.api('POST', '/templates', { name: tag, function_type: 'redirect', payload: { url: `https://example.com/${tag}` } });
      if (res.status !== 201) throw new Error(`create template: ${res.status} ${res.text}`);
      m.entities.push({ kind: 'template', id: res.body.data.id });
      note(m, `→ template#${m.entities.length - 1}`);
    } else {
      // An event nothing in this test emits, so no delivery is ever attempted.
      const res = await inst.api('POST', '/webhooks', { url: `https://hooks.example.com/${tag}`, events: ['batch.failed'], description: tag });
      if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
      m.entities.push({ kind: 'webhook', id: res.body.data.id });
      note(m, `→ webhook#${m.entities.length - 1}`);
    }
  });
}

const pathOf = (e: Entity) =>
  e.kind === 'node' ? `/nodes/${e.slug}` : e.kind === 'rule' ? `/nodes/${e.slug}/rules/${e.id}` : e.kind === 'template' ? `/templates/${e.id}` : `/webhooks/${e.id}`;

function edit(who: number, ref: number, variant: number) {
  return step(`edit #${ref}/${variant} @${who}`, async (m, r) => {
    const e = pick(m.entities, ref);
    if (!e) return;
    const v = `v${m.step}`;
    const body =
      e.kind === 'node'
        ? [{ label: v }, { payload: { url: `https://example.com/${v}` } }, { status: variant % 2 ? 'paused' : 'active' }][variant % 3]
        : e.kind === 'rule'
          ? { priority: m.step }
          : e.kind === 'template'
            ? { name: v }
            : { description: v };
    const res = await instanceOf(r, who).api('PATCH', pathOf(e), body);
    note(m, `(${nameOf(m, e)}) ${res.status}`);
    if (ok(res.status)) m.writes.push({ id: e.id, ...(e.nodeId ? { nodeId: e.nodeId } : {}), step: m.step });
    if (ok(res.status) && wasDeleted(m, e)) m.editsAfterDelete.push(e.id);
  });
}

function remove(who: number, ref: number) {
  return step(`delete #${ref} @${who}`, async (m, r) => {
    const e = pick(m.entities, ref);
    if (!e) return;
    const res = await instanceOf(r, who).api('DELETE', pathOf(e));
    note(m, `(${nameOf(m, e)}) ${res.status}`);
    if (!ok(res.status)) return;
    if (!m.deletedAt.has(e.id)) m.deletedAt.set(e.id, m.step);
    if (e.kind === 'node') m.tombstoned.add(e.slug!);
  });
}

function batch(who: number, quantity: number, sharedPrefix = false) {
  return step(`batch ${quantity} @${who}${sharedPrefix ? ' (shared prefix)' : ''}`, async (m, r) => {
    const inst = instanceOf(r, who);
    // Own prefix per instance, or one prefix for all: offline sites then print the same serials
    // (serial_clash; both nodes keep theirs, docs/sync.md).
    const res = await inst.api('POST', '/batches', {
      label: `batch-${m.step}`,
      prefix: sharedPrefix ? 'P' : `P${who}`,
      quantity,
      function_type: 'redirect',
      base_payload: { url: `https://example.com/batch-${m.step}` },
    });
    if (res.status !== 201 && res.status !== 202) throw new Error(`batch: ${res.status} ${res.text}`);
    const id = res.body.data.id as string;
    for (let i = 0; ; i++) {
      const b = await inst.api('GET', `/batches/${id}`);
      if (b.body.data.status !== 'pending' && b.body.data.status !== 'generating') {
        if (b.body.data.status !== 'ready') throw new Error(`batch ended ${b.text}`);
        break;
      }
      if (i > 2000) throw new Error('batch never finished');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const rows = await inst.read((db) => db.all<{ id: string; slug: string }>('SELECT id, slug FROM nodes WHERE batch_id = ? ORDER BY serial_number', id));
    if (rows.length !== quantity) throw new Error(`batch made ${rows.length} nodes, not ${quantity}`);
    note(m, `→ node#${m.entities.length}..${m.entities.length + rows.length - 1}`);
    for (const row of rows) {
      m.entities.push({ kind: 'node', id: row.id, slug: row.slug });
      m.minted.push(row.slug);
    }
  });
}

function scan(who: number, ref: number, times: number) {
  return step(`scan #${ref} x${times} @${who}`, async (m, r) => {
    const node = pick(m.entities.filter((e) => e.kind === 'node'), ref);
    if (!node) return;
    const inst = instanceOf(r, who);
    // Scans made here only: pushed scans (sync_id set) may land at the remote meanwhile, from a site's background round.
    const count = async () => (await inst.read((db) => db.value<number>('SELECT COUNT(*) FROM scan_events WHERE node_id = ? AND sync_id IS NULL', node.id))) ?? 0;
    const before = await count();
    for (let i = 0; i < times; i++) {
      await fetch(`${inst.url}/v/${node.slug}`, {
        redirect: 'manual',
        headers: { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148' },
      }).then((res) => res.arrayBuffer());
    }
    // The handler answers only after the scan committed, so the count is final here.
    const recorded = (await count()) - before;
    note(m, `(${nameOf(m, node)}) +${recorded}`);
    if (recorded > 0) m.scans.set(node.id, (m.scans.get(node.id) ?? 0) + recorded);
  });
}

const proxyOf = (r: Real, who: number) => r.cluster.sites[who - 1]!.proxy;

const partition = (who: number, direction: 'up' | 'down' | 'both') =>
  step(`partition ${direction} @${who}`, async (_m, r) => proxyOf(r, who).partition(direction));

const heal = (who: number) => step(`heal @${who}`, async (_m, r) => proxyOf(r, who).heal());

/** The next sync call of a site (push or pull) meets `fault` on the wire; later calls pass. */
function fault(who: number, action: FaultAction, on: 'push' | 'changes') {
  return step(`fault ${action} on ${on} @${who}`, async (_m, r) => {
    let armed = true;
    proxyOf(r, who).rule = (_method, path) => {
      if (armed && path.startsWith(`/v1/sync/${on}`)) {
        armed = false;
        return action;
      }
      return 'pass';
    };
  });
}

/** Delay on a site's link to the remote, random per request up to `max` ms (0 ends it). */
const latency = (who: number, max: number, seed: number) =>
  step(`latency ≤${max}ms @${who}`, async (_m, r) => {
    let x = seed || 1;
    // A tiny xorshift so that a replayed seed gets the same delays.
    const random = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) / 2 ** 32);
    proxyOf(r, who).latency = max === 0 ? 0 : { min: 0, max, random };
  });

const restart = (who: number) => step(`restart @${who}`, async (_m, r) => r.cluster.restart(instanceOf(r, who)));

const tick = (ms: number) => step(`tick ${ms}ms`, async (_m, r) => r.cluster.tick(ms));

const sync = (who: number) =>
  step(`sync @${who}`, async (_m, r) => {
    await r.cluster.syncRound(r.cluster.sites[who - 1]!);
  });

/** A template whose url is locked: editing it rewrites every bound node (derived writes). */
const lockedTemplate = (who: number) =>
  step(`create locked template @${who}`, async (m, r) => {
    const res = await instanceOf(r, who).api('POST', '/templates', {
      name: `locked-${m.step}`,
      function_type: 'redirect',
      payload: { url: `https://example.com/locked-${m.step}` },
      locked_fields: ['url'],
    });
    if (res.status !== 201) throw new Error(`create template: ${res.status} ${res.text}`);
    m.entities.push({ kind: 'template', id: res.body.data.id });
    note(m, `→ template#${m.entities.length - 1}`);
  });

const templatesOf = (m: Model) => m.entities.filter((e) => e.kind === 'template');

const nodeFromTemplate = (who: number, ref: number) =>
  step(`create node from template #${ref} @${who}`, async (m, r) => {
    const t = pick(templatesOf(m), ref);
    if (!t) return;
    const res = await instanceOf(r, who).api('POST', '/nodes', {
      label: `from-${m.step}`,
      function_type: 'redirect',
      payload: { url: `https://example.com/from-${m.step}` },
      template_id: t.id,
    });
    note(m, `(${nameOf(m, t)}) ${res.status}`);
    if (res.status !== 201) return; // the template is not (or no longer) known here
    m.entities.push({ kind: 'node', id: res.body.data.id, slug: res.body.data.slug });
    m.minted.push(res.body.data.slug);
    note(m, `→ node#${m.entities.length - 1}`);
  });

/** Edits a template's url: where it is locked, the instance rewrites its bound nodes in the same transaction. */
const templateUrl = (who: number, ref: number) =>
  step(`edit template url #${ref} @${who}`, async (m, r) => {
    const t = pick(templatesOf(m), ref);
    if (!t) return;
    const inst = instanceOf(r, who);
    const bound = await inst.read((db) => db.pluck<string>('SELECT id FROM nodes WHERE template_id = ?', t.id));
    const res = await inst.api('PATCH', `/templates/${t.id}`, { payload: { url: `https://example.com/t${m.step}` } });
    note(m, `(${nameOf(m, t)}) ${res.status}`);
    if (!ok(res.status)) return;
    m.writes.push({ id: t.id, step: m.step });
    if (m.deletedAt.has(t.id)) m.editsAfterDelete.push(t.id);
    const lockedFields = await inst.read((db) => db.value<string>('SELECT locked_fields_json FROM templates WHERE id = ?', t.id));
    const locked = (JSON.parse(lockedFields!) as string[]).includes('url');
    // Derived writes count as writes on those nodes (a node deleted elsewhere meanwhile: one more edit after its delete).
    for (const id of locked ? bound : []) {
      m.writes.push({ id, step: m.step });
      if (m.deletedAt.has(id)) m.editsAfterDelete.push(id);
    }
  });

const writes = [
  fc.tuple(actor, fc.constantFrom<Kind>('node', 'node', 'rule', 'template', 'webhook'), fc.nat()).map(([w, k, ref]) => create(w, k, ref)),
  fc.tuple(actor, fc.nat(), fc.nat()).map(([w, ref, v]) => edit(w, ref, v)),
  fc.tuple(actor, fc.nat()).map(([w, ref]) => remove(w, ref)),
  fc.tuple(actor, fc.integer({ min: 1, max: 12 })).map(([w, q]) => batch(w, q)),
  fc.tuple(actor, fc.nat(), fc.integer({ min: 1, max: 3 })).map(([w, ref, n]) => scan(w, ref, n)),
];
const weather = [
  fc.tuple(site, fc.constantFrom<'up' | 'down' | 'both'>('up', 'down', 'both')).map(([w, d]) => partition(w, d)),
  site.map((w) => heal(w)),
  fc
    .tuple(site, fc.constantFrom<FaultAction>('drop-request', 'drop-response', 'reset-mid-body', 'duplicate', 'duplicate-parallel'), fc.constantFrom<'push' | 'changes'>('push', 'changes'))
    .map(([w, f, on]) => fault(w, f, on)),
  fc.tuple(site, fc.constantFrom(0, 5, 30), fc.nat()).map(([w, max, seed]) => latency(w, max, seed)),
  actor.map((w) => restart(w)),
  fc.integer({ min: 1, max: 10 * 60_000 }).map((ms) => tick(ms)),
];
/** Writes (edits and deletes most) and sync rounds weigh more than weather, so runs get interesting. */
export const commandsV1 = [
  ...writes,
  writes[1]!,
  writes[1]!,
  writes[2]!,
  writes[0]!,
  ...weather,
  site.map((w) => sync(w)),
  site.map((w) => sync(w)),
  site.map((w) => sync(w)),
];

/**
 * v2 adds templates with a locked field (derived writes on bound nodes), nodes made from
 * templates and batches sharing one serial prefix across instances. v1 stays as it was: the
 * seeds in regressions.test.ts replay against it.
 */
export const commandsV2 = [
  ...commandsV1,
  site.map((w) => lockedTemplate(w)),
  fc.tuple(actor, fc.nat()).map(([w, ref]) => nodeFromTemplate(w, ref)),
  fc.tuple(actor, fc.nat()).map(([w, ref]) => nodeFromTemplate(w, ref)),
  fc.tuple(actor, fc.nat()).map(([w, ref]) => templateUrl(w, ref)),
  fc.tuple(actor, fc.integer({ min: 1, max: 12 })).map(([w, q]) => batch(w, q, true)),
];

export const MAX_COMMANDS = 30;

/** Heals every link, syncs every site until nothing changes any more, then checks the invariants. */
export async function settleAndCheck(m: Model, r: Real): Promise<void> {
  const { cluster } = r;
  for (const s of cluster.sites) {
    s.proxy.heal();
    s.proxy.rule = () => 'pass';
  }
  const where = () => `\nsteps:\n  ${m.log.join('\n  ')}`;
  /** Entity ids replaced by the names the step log uses (node#3 …). */
  const readable = (text: string) =>
    m.entities.reduce((t, e) => {
      const named = t.replaceAll(e.id, nameOf(m, e));
      return e.kind === 'node' ? named.replaceAll(e.slug!, `${e.slug}(${nameOf(m, e)})`) : named;
    }, text);
  let previous = '';
  let quiet = false;
  for (let round = 0; round < 12 && !quiet; round++) {
    const statuses = [];
    for (const s of cluster.sites) statuses.push(await cluster.syncRound(s));
    await cluster.tick(1);
    const now = (await Promise.all(cluster.all().map((i) => fingerprint(i)))).join('\n');
    quiet = now === previous && statuses.every((s) => s.pending_changes === 0 && s.online === true && !s.last_error);
    previous = now;
    if (round === 11 && !quiet) {
      throw new Error(`no quiet after 12 rounds: ${JSON.stringify(statuses.map((s) => ({ pending: s.pending_changes, online: s.online, error: s.last_error })))}${where()}`);
    }
  }

  const remote = cluster.remote;
  const remoteState = await syncedState(remote);
  // 1. Every site equals the remote, entity by entity, field by field.
  for (const s of cluster.sites) {
    const diff = diffStates('remote', remoteState, s.name, await syncedState(s));
    if (diff.length) throw new Error(`${s.name} differs from the remote:\n  ${readable(diff.join('\n  '))}${where()}`);
  }
  // 2. Every slug is unique: nobody minted a slug twice.
  const seen = new Set<string>();
  for (const slug of m.minted) {
    if (seen.has(slug)) throw new Error(`slug ${slug} minted twice${where()}`);
    seen.add(slug);
  }
  // 3. No tombstoned slug is live or lost its tombstone, anywhere.
  for (const inst of cluster.all()) {
    const slugs = [...m.tombstoned];
    const [live, tombs] = await inst.read(async (db) => [
      await db.pluck<string>(`SELECT slug FROM nodes WHERE slug IN (${slugs.map(() => '?').join(', ') || 'NULL'})`, ...slugs),
      new Map((await db.all<{ slug: string; deleted_at: string | null }>(`SELECT slug, deleted_at FROM slugs WHERE slug IN (${slugs.map(() => '?').join(', ') || 'NULL'})`, ...slugs)).map((r) => [r.slug, r.deleted_at])),
    ] as const);
    for (const slug of slugs) {
      const tomb = tombs.get(slug);
      if (live.includes(slug) || !tomb) throw new Error(`tombstoned slug ${slug} on ${inst.name}: live=${String(live.includes(slug))} deleted_at=${String(tomb)}${where()}`);
    }
  }
  // 4. Every scan exists exactly once at the remote (for nodes that still exist: a delete removes its scans).
  const scansAt = await remote.read(async (db) => ({
    live: await db.pluck<string>('SELECT id FROM nodes'),
    perNode: new Map((await db.all<{ node_id: string; n: number }>('SELECT node_id, COUNT(*) AS n FROM scan_events GROUP BY node_id')).map((r) => [r.node_id, r.n])),
    twice: await db.all('SELECT sync_id, COUNT(*) AS n FROM scan_events WHERE sync_id IS NOT NULL GROUP BY sync_id HAVING COUNT(*) > 1'),
  }));
  for (const id of scansAt.live) {
    const have = scansAt.perNode.get(id) ?? 0;
    const want = m.scans.get(id) ?? 0;
    if (have !== want) throw new Error(`node ${id}: ${have} scans at the remote, ${want} made${where()}`);
  }
  // … and once only, by its global id (scans made at the remote itself have none).
  if (scansAt.twice.length) throw new Error(`scans stored more than once at the remote: ${JSON.stringify(scansAt.twice)}${where()}`);
  // 5. The conflict log (edit_after_delete) at the remote: an entry for each write made after
  // the delete of its entity (or of a rule's node) in step order, which is HLC order here. Writes
  // made before the delete but arriving after it are dropped as well; logging those is allowed
  // (the log may say more, never less), so per entity: after-delete writes <= entries <= writes.
  const conflicts = await remote.read((db) => db.pluck<string>("SELECT detail_json FROM sync_conflicts WHERE kind = 'edit_after_delete'"));
  const label = (id: string) => {
    const e = m.entities.find((x) => x.id === id);
    return e ? nameOf(m, e) : id;
  };
  const logged = new Map<string, number>();
  for (const d of conflicts) {
    const id = String((JSON.parse(d) as { entity_id?: unknown }).entity_id);
    logged.set(id, (logged.get(id) ?? 0) + 1);
  }
  const must = new Map<string, number>();
  const may = new Map<string, number>();
  for (const id of m.editsAfterDelete) must.set(id, (must.get(id) ?? 0) + 1);
  for (const w of m.writes) {
    if (m.deletedAt.has(w.id) || (w.nodeId !== undefined && m.deletedAt.has(w.nodeId))) may.set(w.id, (may.get(w.id) ?? 0) + 1);
  }
  for (const id of new Set([...logged.keys(), ...must.keys()])) {
    const [n, lo, hi] = [logged.get(id) ?? 0, must.get(id) ?? 0, may.get(id) ?? 0];
    if (n < lo || n > hi) {
      throw new Error(`${label(id)}: ${n} edit_after_delete entries at the remote, for ${lo} write(s) made after its delete and ${hi} write(s) in all${where()}`);
    }
  }
  // 7. An entity tombstoned at two instances has the same (earliest) delete at both (docs/sync.md,
  // Conflicts: "Two deletes"): a later delete left somewhere would let edits between the two pass
  // there. (An instance may lack a tombstone: a rule made on a node deleted elsewhere is dead at
  // the remote on arrival and never travels on.)
  const tombstones = async (i: Instance) =>
    new Map(
      (await i.read((db) => db.all<Record<string, string>>("SELECT entity, entity_id, hlc, writer FROM sync_tombstones WHERE entity <> 'api_key'"))).map((t) => [
        `${t.entity} ${t.entity_id}`,
        `${t.hlc} ${t.writer}`,
      ]),
    );
  const remoteTombstones = await tombstones(remote);
  for (const s of cluster.sites) {
    const diff = [...(await tombstones(s))]
      .filter(([id, v]) => remoteTombstones.has(id) && remoteTombstones.get(id) !== v)
      .map(([id, v]) => `${id}: remote ${remoteTombstones.get(id)}, ${s.name} ${v}`);
    if (diff.length) throw new Error(`tombstones differ between the remote and ${s.name}:\n  ${readable(diff.join('\n  '))}${where()}`);
  }
  // 8. Every captured change belongs to an organization: the feed and a site's pushes are read
  // per organization, so a change without one never travels (migration 061 fixed one such path).
  for (const inst of cluster.all()) {
    const orphans = await inst.read((db) => db.all('SELECT entity, op, COUNT(*) AS n FROM sync_outbox WHERE org_id IS NULL GROUP BY entity, op'));
    if (orphans.length) throw new Error(`${inst.name} has changes without an organization: ${JSON.stringify(orphans)}${where()}`);
  }
  // 6. What the remote logged about a site's pushes reaches that site's log, once each
  // (docs/sync.md, Pull: "in the same transaction as the cursor, so it arrives once").
  // The site named in each entry's detail, read here rather than in SQL (json_extract is SQLite's).
  const remoteLog = (await remote.read((db) => db.all<{ id: number; kind: string; detail_json: string }>('SELECT id, kind, detail_json FROM sync_conflicts WHERE org_id IS NOT NULL ORDER BY id'))).map((c) => ({
    ...c,
    site: (JSON.parse(c.detail_json) as { site_id?: string }).site_id ?? null,
  }));
  for (const s of cluster.sites) {
    const [siteId, siteLog] = await s.read(async (db) => [
      await db.value<string>("SELECT value FROM settings WHERE key = 'sync.site_id'"),
      await db.all<{ remote_id: number; kind: string }>('SELECT remote_id, kind FROM sync_conflicts WHERE remote_id IS NOT NULL ORDER BY remote_id, id'),
    ] as const);
    const want = remoteLog.filter((c) => c.site === siteId).map((c) => `${c.id}:${c.kind}`);
    const have = siteLog.map((c) => `${c.remote_id}:${c.kind}`);
    if (want.join() !== have.join()) throw new Error(`${s.name} holds the remote's conflicts about its pushes [${have.join(', ')}], the remote logged [${want.join(', ')}]${where()}`);
  }
}

export function emptyModel(): Model {
  return { step: 0, entities: [], deletedAt: new Map(), minted: [], tombstoned: new Set(), scans: new Map(), editsAfterDelete: [], writes: [], log: [] };
}

/** The property: any command sequence, then quiet, leaves every invariant true. */
export function syncProperty(
  options: {
    maxCommands?: number;
    processes?: boolean;
    replayPath?: string;
    generators?: 'v1' | 'v2';
    /** Told of each run's model as it starts (explore.ts watches for runs that hang). */
    onRun?: (model: Model) => void;
  } = {},
) {
  const cmdsArb = fc.commands(options.generators === 'v1' ? commandsV1 : commandsV2, {
    maxCommands: options.maxCommands ?? MAX_COMMANDS,
    size: 'max',
    ...(options.replayPath ? { replayPath: options.replayPath } : {}),
  });
  return fc.asyncProperty(cmdsArb, async (cmds) => {
    const cluster = await startCluster({ sites: SITES, clock: new ManualClock(), processes: options.processes ?? false });
    try {
      const model = emptyModel();
      options.onRun?.(model);
      const real: Real = { cluster };
      await fc.asyncModelRun(() => ({ model, real }), cmds);
      await settleAndCheck(model, real);
    } finally {
      await cluster.close();
    }
  });
}

/** The step constructors, for regressions written out by hand (independent of the generators). */
export const steps = { create, edit, remove, batch, scan, partition, heal, fault, latency, restart, tick, sync, lockedTemplate, nodeFromTemplate, templateUrl };

/** Runs a fixed list of steps on a fresh cluster, then quiet and the invariants. */
export async function runScenario(list: Array<fc.AsyncCommand<Model, Real>>, options: { processes?: boolean } = {}): Promise<void> {
  const cluster = await startCluster({ sites: SITES, clock: new ManualClock(), processes: options.processes ?? false });
  try {
    const model = emptyModel();
    const real: Real = { cluster };
    for (const s of list) await s.run(model, real);
    await settleAndCheck(model, real);
  } finally {
    await cluster.close();
  }
}
