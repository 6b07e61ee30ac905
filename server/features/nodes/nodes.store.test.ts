// Nodes, slugs, templates and rules on both backends: the repositories and the transactions the
// services run them in (test/support/nodeStores.ts). PostgreSQL skips without a server.
import { afterEach, describe, expect, it } from 'vitest';
import { backends, insertOrg, nodeServices, openTestStore, type TestStore } from '../../../test/support/nodeStores.ts';
import type { Executor } from '../../db/store.ts';
import { ManualClock } from '../../platform/clock.ts';
import { BLOCK_SIZE, encode40, permute } from '../slugs/index.ts';

for (const { dialect, skip } of backends) {
  describe.skipIf(skip !== null)(`nodes, templates and rules on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let t: TestStore | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    async function setup() {
      t = await openTestStore(dialect);
      const clock = new ManualClock('2026-11-25T10:00:00.000Z');
      const services = nodeServices(t.store, clock);
      const orgId = await insertOrg(t.store);
      const events = async () => (await services.outbox.readAfter(t!.store.db, 0)).map((e) => ({ type: e.type, data: e.data as { id?: string; slug?: string } }));
      return { store: t.store, clock, orgId, events, ...services };
    }

    it('creates nodes with unique minted slugs, lists, searches, updates and deletes them, with their events', async () => {
      const { store, orgId, nodes, events, clock } = await setup();
      const a = await nodes.create(orgId, { label: 'Front door', function_type: 'redirect', payload: { url: 'https://example.com/a' } });
      clock.advance(1);
      const b = await nodes.create(orgId, { label: 'Back door', function_type: 'redirect', payload: { url: 'https://example.com/b' }, status: 'draft' });
      expect(a.slug).toMatch(/^[0-9A-HJKMNP-TV-Z]{8}$/);
      expect(b.slug).not.toBe(a.slug);
      expect(nodes.toApi(a, await nodes.scanBaseOf(orgId)).url).toBe(`https://wm.example/v/${a.slug}`);
      const minted = await store.db.selectFrom('slugs').select(['slug', 'node_id']).orderBy('slug').execute();
      expect(minted).toEqual([{ slug: a.slug, node_id: a.id }, { slug: b.slug, node_id: b.id }].sort((x, y) => x.slug.localeCompare(y.slug)));

      expect((await nodes.list(orgId, { limit: 10, offset: 0 })).rows.map((n) => n.label)).toEqual(['Back door', 'Front door']);
      expect(await nodes.list(orgId, { status: 'draft', limit: 10, offset: 0 })).toMatchObject({ total: 1, rows: [{ id: b.id }] });
      // Case-insensitive search on label, slug and serial; % and _ are literal.
      expect((await nodes.list(orgId, { q: 'front', limit: 10, offset: 0 })).rows.map((n) => n.id)).toEqual([a.id]);
      expect((await nodes.list(orgId, { q: a.slug.toLowerCase(), limit: 10, offset: 0 })).rows.map((n) => n.id)).toEqual([a.id]);
      expect((await nodes.list(orgId, { q: '%', limit: 10, offset: 0 })).total).toBe(0);

      const updated = await nodes.update(orgId, a.slug.toLowerCase(), { payload: { url: 'https://example.com/a2' }, label: 'Front' });
      expect(updated).toMatchObject({ label: 'Front', payload: { url: 'https://example.com/a2' } });
      expect(await nodes.get(orgId, a.slug)).toMatchObject({ label: 'Front', payload: { url: 'https://example.com/a2' } });

      await nodes.remove(orgId, b.slug);
      await expect(nodes.get(orgId, b.slug)).rejects.toThrow('Node not found');
      const tomb = await store.db.selectFrom('slugs').select(['deleted_at']).where('slug', '=', b.slug).executeTakeFirstOrThrow();
      expect(tomb.deleted_at).not.toBeNull();
      expect((await events()).map((e) => [e.type, e.data.slug])).toEqual([
        ['node.created', a.slug],
        ['node.created', b.slug],
        ['node.updated', a.slug],
        ['node.deleted', b.slug],
      ]);
    });

    it('the list total comes from the counts every write keeps (migration 080) and equals a count of the nodes for each status and type filter', async () => {
      const { store, orgId, nodes } = await setup();
      const other = await insertOrg(store, 'Other');
      const made = [];
      for (let i = 0; i < 12; i++) {
        const org = i % 4 === 0 ? other : orgId;
        made.push(await nodes.create(org, { label: `n${i}`, function_type: 'redirect', payload: { url: `https://example.com/${i}` }, status: i % 3 === 0 ? 'draft' : 'active' }));
      }
      const mine = made.filter((n) => n.org_id === orgId);
      await nodes.update(orgId, mine[0]!.slug, { status: 'paused' });
      await nodes.remove(orgId, mine[1]!.slug);
      // Writes the triggers see around the service: a set-based change of type and a delete.
      await store.db.updateTable('nodes').set({ function_type: 'vcard' }).where('org_id', '=', orgId).where('status', '=', 'active').execute();
      await store.db.deleteFrom('nodes').where('id', '=', mine[2]!.id).execute();
      const check = async () => {
        for (const org of [orgId, other]) {
          for (const status of [undefined, 'draft', 'active', 'paused', 'retired'] as const) {
            for (const type of [undefined, 'redirect', 'vcard'] as const) {
              let counted = store.db.selectFrom('nodes').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', org);
              if (status) counted = counted.where('status', '=', status);
              if (type) counted = counted.where('function_type', '=', type);
              const expected = Number((await counted.executeTakeFirstOrThrow()).n);
              const listed = await nodes.list(org, { status, function_type: type, limit: 2, offset: 0 });
              expect({ org, status, type, total: listed.total }).toEqual({ org, status, type, total: expected });
              expect(listed.rows.length).toBe(Math.min(2, expected));
            }
          }
        }
      };
      await check();
      expect((await nodes.list(orgId, { limit: 1, offset: 0 })).total).toBe(7);
      // Many writes: on PostgreSQL each appends deltas, and a list replaces them by their sums.
      for (let i = 0; i < 40; i++) await nodes.update(orgId, mine[0]!.slug, { status: i % 2 === 0 ? 'active' : 'paused' });
      await check();
      const rows = await store.db.selectFrom('node_counts').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
      expect(Number(rows.n)).toBeLessThanOrEqual(6);
      await check();
    });

    it("an organization's own scan domain replaces the instance default in node URLs and events, and null restores it", async () => {
      const { orgId, nodes, organizations, events, clock } = await setup();
      const other = await insertOrg(t!.store, 'Other');
      expect(await organizations.get(orgId)).toMatchObject({ scan_base: 'https://wm.example', scan_base_source: 'instance', scan_base_reach: 'public', scan_base_updated_at: null });
      const set = await organizations.update(orgId, { scan_base: 'http://192.168.1.20:8787' });
      expect(set).toMatchObject({ scan_base: 'http://192.168.1.20:8787', scan_base_source: 'organization', instance_scan_base: 'https://wm.example', scan_base_reach: 'lan' });
      const a = await nodes.create(orgId, { label: 'Door', function_type: 'redirect', payload: { url: 'https://example.com/a' } });
      expect(nodes.toApi(a, await nodes.scanBaseOf(orgId)).url).toBe(`http://192.168.1.20:8787/v/${a.slug}`);
      expect((await events()).find((e) => e.type === 'node.created')?.data).toMatchObject({ url: `http://192.168.1.20:8787/v/${a.slug}` });
      expect(await nodes.scanBaseOf(other)).toBe('https://wm.example'); // another organization keeps the default
      clock.advance(1000);
      expect(await organizations.update(orgId, { scan_base: null })).toMatchObject({ scan_base: 'https://wm.example', scan_base_source: 'instance', scan_base_updated_at: '2026-11-25T10:00:01.000Z' });
    });

    it('creates many as a run of one slug block, one by one where the block has no room for the run; rows and events in order', async () => {
      const { store, orgId, nodes, events } = await setup();
      const checked = (tx: Executor, i: number) => nodes.checkCreate(tx, orgId, { label: `Door ${i}`, function_type: 'redirect', payload: { url: `https://example.com/${i}` } });
      const createMany = (from: number, count: number) =>
        store.transaction(async (tx) => nodes.createManyIn(tx, orgId, await Promise.all(Array.from({ length: count }, (_, i) => checked(tx, from + i)))));
      const slugAt = (block: number, offset: number) => encode40(permute(block * BLOCK_SIZE + offset));
      const first = await nodes.create(orgId, { label: 'Door 0', function_type: 'redirect', payload: { url: 'https://example.com/0' } });
      const { block } = await store.db.selectFrom('slug_blocks').select('block').executeTakeFirstOrThrow();
      expect(first.slug).toBe(slugAt(block, 0));
      const run = await createMany(1, 3);
      expect(run.map((n) => n.slug)).toEqual([1, 2, 3].map((o) => slugAt(block, o)));
      // Two slugs left in the block: the first two of three come from it, the third from a fresh block.
      await store.db.updateTable('slug_blocks').set({ next_offset: BLOCK_SIZE - 2 }).where('block', '=', block).execute();
      const edge = await createMany(4, 3);
      expect(edge.slice(0, 2).map((n) => n.slug)).toEqual([BLOCK_SIZE - 2, BLOCK_SIZE - 1].map((o) => slugAt(block, o)));
      const blocks = await store.db.selectFrom('slug_blocks').select(['block', 'next_offset']).execute();
      expect(blocks).toHaveLength(2);
      expect(blocks.find((b) => b.block === block)?.next_offset).toBe(BLOCK_SIZE);
      const all = [first, ...run, ...edge];
      expect(new Set(all.map((n) => n.slug)).size).toBe(7);
      const stored = await store.db.selectFrom('nodes').select(['slug', 'label']).orderBy('rowid').execute();
      expect(stored).toEqual(all.map((n) => ({ slug: n.slug, label: n.label })));
      const minted = await store.db.selectFrom('slugs').select(['slug', 'node_id']).execute();
      expect(minted.sort((a, b) => a.slug.localeCompare(b.slug))).toEqual(all.map((n) => ({ slug: n.slug, node_id: n.id })).sort((a, b) => a.slug.localeCompare(b.slug)));
      expect((await events()).map((e) => [e.type, e.data.slug])).toEqual(all.map((n) => ['node.created', n.slug]));
    });

    it('rolls a failed create back: no node, no slug, no event', async () => {
      const { store, orgId, nodes, events } = await setup();
      await expect(nodes.create(orgId, { label: 'Bad', function_type: 'redirect', payload: { url: 'not a url' } })).rejects.toThrow();
      await expect(nodes.create(orgId, { label: 'No template', function_type: 'redirect', payload: {}, template_id: 'nope' })).rejects.toThrow();
      expect(await store.db.selectFrom('nodes').select('id').execute()).toEqual([]);
      expect(await events()).toEqual([]);
    });

    it('a template pushes a changed locked field to its bound nodes (node.updated each), or changes nothing', async () => {
      const { orgId, nodes, templates, events } = await setup();
      const tpl = await templates.create(orgId, { name: 'Brand', function_type: 'vcard', payload: { organization: 'Acme' }, locked_fields: ['organization'] });
      const bound = await nodes.create(orgId, { label: 'Card', function_type: 'vcard', payload: { first_name: 'Ada' }, template_id: tpl.id });
      expect(bound.payload).toEqual({ first_name: 'Ada', organization: 'Acme' });
      await expect(nodes.update(orgId, bound.slug, { payload: { organization: 'Other' } })).rejects.toThrow('Locked by template');

      await templates.update(orgId, tpl.id, { payload: { organization: 'Acme Ltd' } });
      expect((await nodes.get(orgId, bound.slug)).payload).toEqual({ first_name: 'Ada', organization: 'Acme Ltd' });
      expect((await events()).map((e) => e.type)).toEqual(['node.created', 'node.updated']);
      expect((await templates.get(orgId, tpl.id)).locked_fields).toEqual(['organization']);
      // Locking a field the node sets differently (vcard first_name, which the template lacks) is
      // not allowed to make the node invalid: nothing changes.
      await expect(templates.update(orgId, tpl.id, { locked_fields: ['organization', 'first_name'] })).rejects.toMatchObject({ details: { payload: expect.stringMatching(/bound node/) } });
      expect((await templates.get(orgId, tpl.id)).locked_fields).toEqual(['organization']);
      expect((await templates.list(orgId, 10, 0)).total).toBe(1);
      await templates.remove(orgId, tpl.id);
      expect((await nodes.get(orgId, bound.slug)).template_id).toBeNull();
    });

    it('lists rules in evaluation order (priority, then age, ties within one millisecond by insertion)', async () => {
      const { orgId, nodes, rules } = await setup();
      const node = await nodes.create(orgId, { label: 'R', function_type: 'redirect', payload: { url: 'https://example.com' } });
      const add = (url: string, priority: number) =>
        rules.create(orgId, node.slug, { rule_type: 'geo_based', conditions: { countries: ['FR'] }, function_type: 'redirect', payload: { url }, priority });
      // Same clock reading for all: only insertion order tells them apart.
      for (const [url, priority] of [['https://example.com/1', 5], ['https://example.com/2', 0], ['https://example.com/3', 5], ['https://example.com/4', 0]] as const) await add(url, priority);
      expect((await rules.list(orgId, node.slug)).map((r) => r.payload.url)).toEqual(['https://example.com/2', 'https://example.com/4', 'https://example.com/1', 'https://example.com/3']);
      const first = (await rules.list(orgId, node.slug))[0]!;
      await rules.update(orgId, node.slug, first.id, { priority: 9, enabled: false });
      expect((await rules.get(orgId, node.slug, first.id)).enabled).toBe(false);
      expect((await rules.list(orgId, node.slug)).at(-1)!.id).toBe(first.id);
      const split = { rule_type: 'traffic_split' as const, function_type: 'redirect' as const, payload: { url: 'https://example.com/s' } };
      await rules.create(orgId, node.slug, { ...split, conditions: { weight: 70 } });
      await expect(rules.create(orgId, node.slug, { ...split, conditions: { weight: 40 } })).rejects.toMatchObject({ details: { 'conditions.weight': expect.stringMatching(/30 left/) } });
      await rules.remove(orgId, node.slug, first.id);
      expect(await rules.list(orgId, node.slug)).toHaveLength(4);
    });
  });
}
