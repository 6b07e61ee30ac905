/**
 * Durable recording of a batch of scans on PostgreSQL, one transaction per batch (a per-process
 * group commit, like writer.ts on SQLite): the batch's nodes locked in id order, the scan events in
 * one multi-row INSERT, scan_count (the nodes feature's statement) and, for organizations with an
 * endpoint subscribed to `node.scanned`, the outbox events. The promise resolves after COMMIT,
 * which returns once the commit is flushed (synchronous_commit on, PostgreSQL's default), so a scan
 * answered after it is never lost.
 */
import type { Executor, Store } from '../../db/store.ts';
import type { SubscriptionCheck } from '../../platform/outbox.ts';
import { addScanCounts, lockNodesForScans } from '../nodes/index.ts';
import { settleTapOnPostgres, TAP_UNVERIFIED_EVENT, tapUnverifiedEvent } from '../tapproofs/index.ts';
import type { PostgresScanRepo, OutboxInsert } from './postgresRepo.ts';
import type { Recount } from './storage.ts';
import { OutboxIds, type ScanRecord, type WriteResult } from './writer.ts';

export class PostgresScanWriter {
  private readonly store: Store;
  private readonly repo: PostgresScanRepo;
  /** The webhooks feature's question (webhooks/index.ts subscriptionCheck), asked in the batch's transaction. */
  private readonly subscribed: SubscriptionCheck;
  /** Per organization: does an endpoint subscribe to node.scanned? Valid while the epoch holds. */
  private readonly emits = new Map<string, boolean>();
  private epoch = -1;
  private readonly ids = new OutboxIds();

  constructor(store: Store, repo: PostgresScanRepo, subscribed: SubscriptionCheck) {
    this.store = store;
    this.repo = repo;
    this.subscribed = subscribed;
  }

  /**
   * `recount` (storage.ts Recount) is told the locked nodes' stored counts before anything is
   * written: other processes' scans of a node with max_scans committed before this lock are in
   * them, theirs after it wait for this commit, so each scan is resolved against the exact count.
   */
  write(scans: readonly ScanRecord[], recount?: Recount): Promise<WriteResult> {
    return this.store.transaction(async (tx) => {
      const results: WriteResult = scans.map(() => null);
      // A node deleted before this lock gets no scan (answered 503, as on SQLite); one deleted
      // after it waits for this commit.
      const existing = await lockNodesForScans(tx, [...new Set(scans.map((s) => s.node_id))]);
      recount?.(existing);
      const kept: number[] = [];
      scans.forEach((s, i) => {
        if (existing.has(s.node_id)) kept.push(i);
      });
      if (kept.length === 0) return results;
      await this.settleTaps(tx, kept.map((i) => scans[i] as ScanRecord));
      const ids = await this.repo.insertScans(
        tx,
        kept.map((i) => {
          const { slug: _slug, tap: _tap, ...row } = scans[i] as ScanRecord;
          return row;
        }),
      );
      const counts = new Map<string, number>();
      const humans: Array<{ scan: ScanRecord; id: number }> = [];
      kept.forEach((i, k) => {
        const scan = scans[i] as ScanRecord;
        const id = ids[k] as number;
        results[i] = id;
        if (scan.is_bot) return;
        counts.set(scan.node_id, (counts.get(scan.node_id) ?? 0) + 1);
        humans.push({ scan, id });
      });
      await addScanCounts(tx, counts);
      if (humans.length > 0) await this.recordEvents(tx, humans);
      return results;
    });
  }

  /**
   * Tag scans' claims in this transaction (tapproofs/claimWriter.ts), one after the other in
   * batch order: the scan's source (and outcome when refused); node.tap_unverified for failures.
   */
  private async settleTaps(tx: Executor, scans: readonly ScanRecord[]): Promise<void> {
    const events: OutboxInsert[] = [];
    const now = Date.now();
    for (const s of scans) {
      if (!s.tap) continue;
      const at = new Date(s.ts).toISOString();
      const failed = await settleTapOnPostgres(tx, s.tap, at);
      s.source = s.tap.verified ? 'nfc_verified' : 'nfc_unverified';
      if (s.tap.refused) {
        s.outcome = 'unverified';
        s.rule_id = null;
      }
      if (failed && (await this.subscribed(tx, s.org_id, TAP_UNVERIFIED_EVENT))) {
        events.push({ id: this.ids.next(now), org_id: s.org_id, type: TAP_UNVERIFIED_EVENT, data_json: JSON.stringify(tapUnverifiedEvent(s.tap, at)), created_at: at });
      }
    }
    if (events.length > 0) await this.repo.insertOutbox(tx, events);
  }

  /** node.scanned for the organizations with a subscriber (docs/scans.md "What is recorded"). */
  private async recordEvents(tx: Executor, humans: ReadonlyArray<{ scan: ScanRecord; id: number }>): Promise<void> {
    // Read in this transaction: an endpoint committed before it gets these events.
    const epoch = await this.repo.cacheEpoch(tx);
    if (epoch !== this.epoch) {
      this.emits.clear();
      this.epoch = epoch;
    }
    for (const org of new Set(humans.map((h) => h.scan.org_id))) {
      if (!this.emits.has(org)) this.emits.set(org, await this.subscribed(tx, org, 'node.scanned'));
    }
    const now = Date.now();
    const events: OutboxInsert[] = [];
    for (const { scan: s, id } of humans) {
      if (!this.emits.get(s.org_id)) continue;
      const at = new Date(s.ts).toISOString();
      const data = {
        scan_id: id,
        node: { id: s.node_id, slug: s.slug },
        timestamp: at,
        device_type: s.device_type,
        os: s.os,
        browser: s.browser,
        country: s.country,
        source: s.source,
        rule_id: s.rule_id,
        outcome: s.outcome,
      };
      events.push({ id: this.ids.next(now), org_id: s.org_id, type: 'node.scanned', data_json: JSON.stringify(data), created_at: at });
    }
    await this.repo.insertOutbox(tx, events);
  }
}
