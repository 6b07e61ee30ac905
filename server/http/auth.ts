import type { Plan } from '../schemas/common.ts';

/** A key's request budgets (its plan's, or an enterprise key's own). */
export interface Limits {
  standard_per_minute: number;
  batch_per_minute: number;
  burst_per_second: number;
}

/** Who is calling: what the HTTP layer hands every handler after authentication. */
export interface AuthenticatedKey {
  keyId: string;
  orgId: string;
  plan: Plan;
  limits: Limits;
  /** An instance-admin key: may act on the whole instance (pairing, the data directory). */
  admin: boolean;
}

/**
 * What the HTTP layer needs to authenticate a request. The keys feature implements it; http/
 * sits below the features and imports none (eslint.config.js).
 */
export interface KeyAuthenticator {
  authenticate(presented: string | undefined): Promise<AuthenticatedKey | undefined>;
}
