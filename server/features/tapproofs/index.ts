/**
 * Tap proofs (issue 16): a tag URL's evidence that the scan came from the physical tag, checked
 * at scan time. Kinds live one per folder in kinds/ and are listed in createTapProofs.
 */
import type { Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import type { SecretStore } from '../../platform/secrets.ts';
import { ntag21xKind } from './kinds/ntag21x/kind.ts';
import { ntag424Kind } from './kinds/ntag424/kind.ts';
import { MasterKeys } from './masterKeys.ts';
import { TapProofService } from './service.ts';

export { NTAG21X_KIND } from './kinds/ntag21x/kind.ts';
export { NTAG424_KIND } from './kinds/ntag424/kind.ts';
export { MasterKeys, type MasterKeyVersion } from './masterKeys.ts';
export type { TapProofCheck, TapProofFailure, TapProofKind } from './registry.ts';
export type { TapProofPolicy, TapProofTagRow } from './repo.ts';
export { tapProofRoutes } from './routes.ts';
export { TapProofService } from './service.ts';
export { TAP_UNVERIFIED_EVENT, tapUnverifiedEvent, type TapClaim } from './claim.ts';
export { prepareSqliteTapSettle, settleTapOnPostgres } from './claimWriter.ts';

export interface TapProofsOptions {
  store: Store;
  clock: Clock;
  /** Where the organization master keys are kept (docs/nfc.md "Keys"). */
  keyStore: SecretStore;
}

/** The service with every kind Waymark knows. A new kind: a folder in kinds/ and one line here. */
export function createTapProofs({ store, clock, keyStore }: TapProofsOptions): { service: TapProofService; masterKeys: MasterKeys } {
  const masterKeys = new MasterKeys(keyStore, () => clock.now());
  const kinds = [ntag424Kind(masterKeys), ntag21xKind()];
  return { service: new TapProofService({ store, clock, kinds }), masterKeys };
}
