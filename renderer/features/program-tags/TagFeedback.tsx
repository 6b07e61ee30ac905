import { useState } from 'react';
import type { NfcEventT } from '../../../server/schemas/nfc.ts';
import { beep } from './feedback.ts';
import type { Refusal, TagWritten } from './client.ts';
import { useNfcEvents } from '../../lib/nfcEvents.ts';
import './program-tags.css';

export type Outcome = { kind: 'success'; written: TagWritten } | { kind: 'failure'; refusal: Pick<Refusal, 'message'> & Partial<Refusal> };

/** The big green/red banner for the last tag: what was written, or why the tag was refused. */
export function OutcomeBanner({ outcome }: { outcome: Outcome | null }) {
  if (!outcome) return null;
  if (outcome.kind === 'success') {
    const w = outcome.written;
    return (
      <div className="tag-flash tag-flash-success" role="status" aria-live="assertive" data-outcome="success">
        <span className="tag-flash-icon" aria-hidden="true">
          ✓
        </span>
        <div>
          <p className="tag-flash-title">Written {w.serial ?? w.slug}</p>
          <p className="tag-flash-text">
            {w.tag_type} <code>{w.hardware_id}</code>, verified{w.locked ? ' and locked' : ''}
            {w.protection === 'ntag424_sun' ? `, keyed for secure taps (key version ${w.key_version})` : ''}
            {w.recognised ? ' (it already held this URL: bound without writing)' : ''}
            {w.reassigned_from ? ` (taken over from ${w.reassigned_from})` : ''}.
          </p>
        </div>
      </div>
    );
  }
  const r = outcome.refusal;
  return (
    <div className="tag-flash tag-flash-failure" role="alert" data-outcome="failure">
      <span className="tag-flash-icon" aria-hidden="true">
        ✕
      </span>
      <div>
        <p className="tag-flash-title">Tag not written{r.serial ? ` (${r.serial})` : ''}</p>
        <p className="tag-flash-text">
          {r.message}
          {r.code === 'uid_bound' && r.bound_to ? ` Bound to ${r.bound_to.serial ?? r.bound_to.slug} “${r.bound_to.label}”.` : ''}
        </p>
      </div>
    </div>
  );
}

/**
 * Live success/failure feedback for a batch writing session: follows the NFC event stream,
 * beeps (distinct sounds) and shows the outcome of the last tag. Drop it on any NFC screen.
 */
export function TagFeedback() {
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  useNfcEvents((e: NfcEventT) => {
    if (e.type === 'tag.written') {
      beep('success');
      setOutcome({ kind: 'success', written: e.data });
    } else if (e.type === 'tag.refused') {
      beep('failure');
      setOutcome({ kind: 'failure', refusal: e.data });
    }
  });
  return <OutcomeBanner outcome={outcome} />;
}
