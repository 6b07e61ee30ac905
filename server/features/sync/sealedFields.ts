import type { SyncChangeT } from '../../schemas/sync.ts';
import { SecretCipher } from '../../platform/secretCipher.ts';

/** Synced columns that each side keeps sealed under its own data key (webhooks/repo.ts). */
const SEALED_COLUMNS: Partial<Record<SyncChangeT['entity'], readonly string[]>> = {
  webhook: ['secret', 'previous_secret'],
};

/**
 * Sealed secrets at the sync boundary (docs/decisions.md, "Webhook secrets at rest"): each side
 * seals under its own data key, which the other does not have, so a change travels with the clear
 * value (inside the authenticated connection, as before sealing existed), opened as it leaves and
 * sealed again as it is applied. The row id is the associated data on both sides.
 */
export class SealedFields {
  private readonly cipher: SecretCipher | null;

  /** Null: nothing is sealed (tests of the sync machinery that never read a webhook). */
  constructor(cipher: SecretCipher | null) {
    this.cipher = cipher;
  }

  /** A change as it is sent: sealed columns opened. */
  toWire(change: SyncChangeT): SyncChangeT {
    return this.map(change, (value, cipher) => cipher.open(value, change.entity_id));
  }

  /** A received change as it is stored here: sealed columns sealed under this side's key. */
  fromWire(change: SyncChangeT): SyncChangeT {
    return this.map(change, (value, cipher) => cipher.seal(cipher.open(value, change.entity_id), change.entity_id));
  }

  /** The fields with their secrets sealed, or null when none is in clear (a change logged before sealing existed). */
  sealClear(entity: SyncChangeT['entity'], id: string, fields: Record<string, unknown>): Record<string, unknown> | null {
    const columns = SEALED_COLUMNS[entity];
    const cipher = this.cipher;
    if (!columns || !cipher) return null;
    const clear = columns.filter((c) => typeof fields[c] === 'string' && !SecretCipher.isSealed(fields[c]));
    if (clear.length === 0) return null;
    return { ...fields, ...Object.fromEntries(clear.map((c) => [c, cipher.seal(fields[c] as string, id)])) };
  }

  private map(change: SyncChangeT, convert: (value: string, cipher: SecretCipher) => string): SyncChangeT {
    const columns = SEALED_COLUMNS[change.entity];
    const cipher = this.cipher;
    if (!columns || !cipher) return change;
    const fields = { ...change.fields };
    for (const column of columns) {
      const value = fields[column];
      if (typeof value === 'string') fields[column] = convert(value, cipher);
    }
    return { ...change, fields };
  }
}
