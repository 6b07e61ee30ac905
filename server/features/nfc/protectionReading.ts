/**
 * Check mode's "what protects this tag": for an NTAG 424 DNA whether the SUN message in the URL
 * it was just read with verifies with this organization's keys (which key version, which read
 * counter), for an NTAG21x its UID + counter mirror and whether this organization protected it.
 * Only a check: no counter is claimed, nothing is stored (a phone's next tap still verifies).
 */
import type { NfcTagProtectionReadingT } from '../../schemas/nfc.ts';
import { SUN_PARAM } from './ntag424/index.ts';
import { NTAG424_TYPE } from './ntag424-program.ts';
import { MIRROR_PARAM, parseMirror } from './ntag21x.ts';
import type { TagInfo } from './program.ts';

export type TagProtectionReading = NfcTagProtectionReadingT;

/** The SUN check the tap proofs feature does at scan time, without the replay guard. */
export type SunCheckOf = (orgId: string, query: URLSearchParams) => { ok: true; keyVersion: number; counter: number } | { ok: false; reason: string };

export interface ProtectionContext {
  orgId: string;
  /** Null when this instance has no NTAG 424 DNA keys at all. */
  checkSun: SunCheckOf | null;
  /** The organization's current master key version, when it has one (never creates one). */
  currentKeyVersion: number | null;
  /** What this organization's last write of this tag set (write log), if it wrote it. */
  lastWrite: { protected: boolean } | undefined;
}

const NTAG21X = /^NTAG21[356]$/;

export function protectionReading(info: TagInfo, url: string | null, ctx: ProtectionContext): TagProtectionReading | null {
  if (!info.supported && !info.type) return null;
  const query = queryOf(url);
  const base = { mirror: false, verifies: null, key_version: null, rekey_due: false, counter: null, password: null };
  if (info.type === NTAG424_TYPE) return ntag424Reading(info, query, ctx, base);
  if (info.type && NTAG21X.test(info.type)) {
    const mirrored = query.get(MIRROR_PARAM);
    const mirror = mirrored === null ? null : parseMirror(mirrored);
    const password = ctx.lastWrite ? ctx.lastWrite.protected : null;
    const passwordText =
      password === null ? 'not written by this organization, so its password state is unknown' : password ? 'password-protected with this organization’s password' : 'not password-protected';
    if (mirrored === null) return { ...base, kind: 'ntag21x', password, message: `No UID + counter mirror; ${passwordText}.` };
    const verifies = mirror ? mirror.uid === info.uid : null;
    const mirrorText = !mirror
      ? 'UID + counter mirror placeholder (this read did not apply the mirror)'
      : verifies
        ? `UID + counter mirror on (this tag’s UID, counter ${mirror.counter}): evidence, not proof`
        : `UID + counter mirror naming another tag (${mirror.uid}): a copied URL`;
    return { ...base, kind: 'ntag21x', mirror: true, verifies, counter: mirror?.counter ?? null, password, message: `${mirrorText}; ${passwordText}.` };
  }
  return { ...base, kind: 'none', message: 'No tap proof: a plain NDEF tag (its URL can be copied).' };
}

function ntag424Reading(info: TagInfo, query: URLSearchParams, ctx: ProtectionContext, base: Omit<TagProtectionReading, 'kind' | 'message'>): TagProtectionReading {
  const tagVersion = info.ntag424?.keyVersion ?? null;
  if (!info.ntag424?.sdm) {
    return { ...base, kind: 'ntag424_sun', message: 'NTAG 424 DNA without secure unique messages (not personalised): writing it personalises it.' };
  }
  const rekeyDue = (v: number) => ctx.currentKeyVersion !== null && v < ctx.currentKeyVersion;
  const due = (v: number) => (rekeyDue(v) ? ` Version ${ctx.currentKeyVersion} is current: writing it again re-keys it.` : '');
  // Right after a write here the URL is the stored template: the write's own verify read checked the mirror.
  const verified = info.ntag424.verifiedCounter;
  if (verified !== undefined && tagVersion !== null && /^0+$/.test(query.get(SUN_PARAM.picc) ?? '')) {
    return {
      ...base,
      kind: 'ntag424_sun',
      mirror: true,
      verifies: true,
      key_version: tagVersion,
      rekey_due: rekeyDue(tagVersion),
      counter: verified,
      message: `Secure unique messages verify with this organization’s master key version ${tagVersion} (read counter ${verified}).${due(tagVersion)}`,
    };
  }
  const check = ctx.checkSun && (query.has(SUN_PARAM.picc) || query.has(SUN_PARAM.cmac)) ? ctx.checkSun(ctx.orgId, query) : null;
  if (check?.ok) {
    return {
      ...base,
      kind: 'ntag424_sun',
      mirror: true,
      verifies: true,
      key_version: check.keyVersion,
      rekey_due: rekeyDue(check.keyVersion),
      counter: check.counter,
      message: `Secure unique messages verify with this organization’s master key version ${check.keyVersion} (read counter ${check.counter}).${due(check.keyVersion)}`,
    };
  }
  const why = check ? ` (${check.reason.replaceAll('_', ' ')})` : ctx.checkSun ? ' (no secure message in its URL)' : ' (this instance has no tag master keys)';
  return {
    ...base,
    kind: 'ntag424_sun',
    mirror: query.has(SUN_PARAM.picc),
    verifies: false,
    key_version: tagVersion,
    message: `Secure unique messages on, but they do not verify with this organization’s keys${why}: personalised by someone else, or with a master key this instance no longer has.`,
  };
}

function queryOf(url: string | null): URLSearchParams {
  try {
    return url ? new URL(url).searchParams : new URLSearchParams();
  } catch {
    return new URLSearchParams();
  }
}
