import { type FormEvent, useState } from 'react';
import type { TapProofPolicy } from '../../../server/schemas/tapProofs.ts';
import { FormActions } from '../../components/Button.tsx';
import { FieldSet } from '../../components/Field.tsx';
import { Card } from '../../components/PageHeader.tsx';
import { ErrorState, Loading, Notice } from '../../components/States.tsx';
import { api, type NodeT } from '../../lib/api.ts';
import { formatNumber, sourceLabel } from '../../lib/format.ts';
import { toast } from '../../lib/toast.ts';
import { useFormSubmit } from '../../lib/useFormSubmit.ts';
import { useResource } from '../../lib/useResource.ts';

type Settings = Awaited<ReturnType<typeof api.nodes.tapProof>>;

const POLICY_TEXT: Record<TapProofPolicy, { title: string; hint: string }> = {
  serve: {
    title: 'Serve as usual and record it',
    hint: 'The visitor gets the node’s content; the scan is recorded as “NFC link, not verified” and a node.tap_unverified webhook event goes to the endpoints that subscribe.',
  },
  refuse: {
    title: 'Show “This tag could not be verified”',
    hint: 'The visitor gets that page (403) and nothing of the content; the scan and the webhook event are recorded all the same.',
  },
};

/** What a registered tag can tell at scan time, per tap proof kind (docs/nfc.md). */
const KIND_TEXT: Record<string, string> = {
  ntag424: 'NTAG 424 DNA: proves each tap',
  ntag21x: 'NTAG21x mirror: evidence of a tap, not proof',
};

/**
 * The node's tap proof policy (GET/PUT /v1/nodes/{slug}/tap-proof, docs/scans.md): what a tag URL
 * whose proof fails gets, the tags that can prove taps of this node, and its scans by source.
 */
export function TapProofPanel({ node }: { node: NodeT }) {
  const settings = useResource(() => api.nodes.tapProof(node.slug), [node.slug]);
  const analytics = useResource(() => api.nodes.analytics(node.slug, { interval: 'day' }), [node.slug]);
  return (
    <div className="detail-grid">
      <Card title="Tag verification">
        <Explanation />
        {settings.error ? (
          <ErrorState error={settings.error} onRetry={settings.reload} title="Could not load the tag verification policy" />
        ) : !settings.data ? (
          <Loading label="Loading the policy…" />
        ) : (
          <PolicyForm key={settings.data.policy} slug={node.slug} settings={settings.data} onSaved={settings.reload} />
        )}
      </Card>
      <div className="stack">
        <Card title="Tags checked at scan time">
          {settings.data ? <TagList tags={settings.data.tags} /> : settings.error ? null : <Loading />}
        </Card>
        <Card title="Scans by source (last 30 days)">
          {analytics.error ? (
            <ErrorState error={analytics.error} onRetry={analytics.reload} title="Could not load the scans" />
          ) : !analytics.data ? (
            <Loading />
          ) : analytics.data.breakdowns.source.length === 0 ? (
            <p className="muted">No scans yet.</p>
          ) : (
            <dl className="facts" data-source-breakdown="">
              {analytics.data.breakdowns.source.map((s) => (
                <SourceRow key={s.value ?? 'unknown'} label={sourceLabel(s.value)} scans={s.scans} />
              ))}
            </dl>
          )}
        </Card>
      </div>
    </div>
  );
}

function SourceRow({ label, scans }: { label: string; scans: number }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>{formatNumber(scans)}</dd>
    </>
  );
}

/** What a technician needs to choose: what counts as verified, and which tags can prove a tap. */
function Explanation() {
  return (
    <div data-tap-proof-help="">
      <p>
        A scan counts as a <strong>verified tap</strong> only when its URL carries a valid tap proof: an <strong>NTAG 424 DNA</strong> written by Waymark
        adds a fresh encrypted message and signature to its URL on every tap, checked with that tag’s own key and a counter that must go up. A copied,
        replayed or edited URL fails.
      </p>
      <p>
        <strong>NTAG213/215/216</strong> tags cannot prove a tap. Written with the mirror, their URL carries the chip’s UID and tap counter, which Waymark
        checks (right tag, counter going up): that is evidence, not proof, since anyone can edit it. A plain tag’s URL (<code>?nfc</code>) and a QR code
        prove nothing.
      </p>
      <p>
        The policy below applies when a URL carries a proof or mirror that fails (wrong tag, replayed, tampered). Plain tag URLs and QR codes are served as
        usual either way.
      </p>
    </div>
  );
}

function PolicyForm({ slug, settings, onSaved }: { slug: string; settings: Settings; onSaved(): void }) {
  const [policy, setPolicy] = useState<TapProofPolicy>(settings.policy);
  const { formRef, formError, busy, send } = useFormSubmit({ refused: 'The server did not accept the policy' });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (policy === settings.policy) {
      toast.info('Nothing to save');
      return;
    }
    await send({}, async () => {
      await api.nodes.setTapProofPolicy(slug, policy);
      toast.success('Tag verification policy saved');
      onSaved();
    });
  };
  return (
    <form ref={formRef} onSubmit={submit} noValidate aria-label="Tag verification policy">
      <FieldSet legend="When a tag’s proof fails">
        {(['serve', 'refuse'] as const).map((p) => (
          <label key={p} className="radio-choice">
            <input type="radio" name="tap_proof_policy" value={p} checked={policy === p} onChange={() => setPolicy(p)} />
            <span>
              <strong>{POLICY_TEXT[p].title}</strong>
              <br />
              <span className="muted">{POLICY_TEXT[p].hint}</span>
            </span>
          </label>
        ))}
      </FieldSet>
      {policy === 'refuse' && !settings.tags.some((t) => t.kind === 'ntag424') ? (
        <Notice kind="warning">
          No NTAG 424 DNA is registered for this node, so none of its tags proves a tap: refusing turns away URLs whose proof or mirror fails, never a
          plain tag URL.
        </Notice>
      ) : null}
      {formError ? <Notice kind="error">{formError}</Notice> : null}
      <FormActions submitLabel="Save policy" busy={busy} />
    </form>
  );
}

function TagList({ tags }: { tags: Settings['tags'] }) {
  if (tags.length === 0) {
    return <p className="muted">No tag of this node is checked at scan time (none was written as an NTAG 424 DNA or with the NTAG21x mirror).</p>;
  }
  return (
    <div className="table-wrap">
      <table className="table table-compact">
        <caption className="visually-hidden">Tags checked at scan time</caption>
        <thead>
          <tr>
            <th scope="col">Chip UID</th>
            <th scope="col">Kind</th>
            <th scope="col">Last counter</th>
          </tr>
        </thead>
        <tbody>
          {tags.map((t) => (
            <tr key={`${t.kind}-${t.uid}`}>
              <td className="mono" data-label="Chip UID">
                {t.uid}
              </td>
              <td data-label="Kind">
                {KIND_TEXT[t.kind] ?? t.kind}
                {t.kind === 'ntag424' ? ` (key version ${t.key_version})` : ''}
              </td>
              <td data-label="Last counter">{t.last_counter < 0 ? 'No tap yet' : formatNumber(t.last_counter)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
