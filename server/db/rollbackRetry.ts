/**
 * PostgreSQL ends a transaction with a class 40 error to break a deadlock (40P01) or a
 * serialization conflict (40001). The whole transaction rolled back, so running it again from
 * the start is safe, and is what the caller would have to do anyway.
 */
export function isTransactionRollback(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('40');
}

/** Runs `transaction` (one whole database transaction) again after a class 40 rollback, up to `attempts` times in all. */
export async function retryRolledBack<T>(transaction: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (err) {
      if (attempt >= attempts || !isTransactionRollback(err)) throw err;
    }
  }
}
