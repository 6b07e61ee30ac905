import { describe, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy } from '../support/faultProxy.ts';
import { paired, proxies, type Remote, type Site, startBusyRemote, startSite, statusOf, waitFor } from './support.ts';

/*
 * What an outside scenario with one remote and several sites found (issue 15, item 4), as real
 * CLI processes on loopback, each site behind a fault proxy that takes its link down.
 */

async function ok(res: Promise<{ status: number; text: string; body: any }>, status = 200) { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = await res;
  expect(r.status, r.text).toBe(status);
  return r.body.data;
}

interface LinkedSite extends Site {
  link: FaultProxy;
}

/** A busy remote and `count` sites, each paired through its own fault proxy. */
async function cluster(count: number): Promise<{ remote: Remote; sites: LinkedSite[] }> {
  const remote = await startBusyRemote();
  const sites: LinkedSite[] = [];
  for (let i = 0; i < count; i++) {
    const link = await startFaultProxy(remote.url);
    proxies.push(link);
    const site = await startSite(link.url, remote.key);
    await paired(site);
    sites.push({ ...site, link });
  }
  return { remote, sites };
}

/** The documented bound of `POST /v1/sync/run` (docs/sync.md), in ms. */
const RUN_BOUND_MS = 15_000;

describe('sync gaps found by an outside scenario', () => {
  it('POST /sync/run gives up within its bound when the remote accepts connections but never answers', async () => {
    const { sites } = await cluster(2);
    for (const site of sites) site.link.rule = () => 'hold-request';
    const outcomes = await Promise.all(
      sites.map(async (site) => {
        // A round already out when the run arrives (the worker is often mid-round against a
        // silent remote): the run must not wait for that round and then its own.
        const first = site.api('POST', '/sync/run');
        await waitFor('a call held by the link', async () => site.link.calls.some((c) => c.action === 'hold-request'), 60_000);
        const started = Date.now();
        const status = await ok(site.api('POST', '/sync/run'));
        const elapsed = Date.now() - started;
        await ok(first);
        return { status, elapsed };
      }),
    );
    for (const { status, elapsed } of outcomes) {
      expect(status.online).toBe(false);
      expect(status.last_error).toBe('Remote unreachable: Remote did not answer within 15 s');
      // Not a timing benchmark: without the bound a run waits for two call timeouts (30 s).
      expect(elapsed).toBeLessThan(RUN_BOUND_MS + 10_000);
    }
    // Links healed: the next run reaches the remote again.
    for (const site of sites) {
      site.link.rule = () => 'pass';
      site.link.releaseHeld();
      await waitFor('back online', async () => (await ok(site.api('POST', '/sync/run'))).online === true, 120_000, 500);
      expect((await statusOf(site)).last_error).toBeNull();
    }
  }, 240_000);
});
