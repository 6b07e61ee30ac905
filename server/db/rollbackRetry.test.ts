import { describe, expect, it } from 'vitest';
import { retryRolledBack } from './rollbackRetry.ts';

const rollback = (code: string) => Object.assign(new Error('deadlock detected'), { code });

describe('retryRolledBack', () => {
  it('runs a transaction again after a deadlock or serialization rollback, and returns its result', async () => {
    const codes = ['40P01', '40001'];
    let runs = 0;
    const result = await retryRolledBack(async () => {
      runs++;
      const code = codes.shift();
      if (code) throw rollback(code);
      return 'applied';
    });
    expect(result).toBe('applied');
    expect(runs).toBe(3);
  });

  it('gives up after the attempts, and never retries other errors', async () => {
    let runs = 0;
    await expect(retryRolledBack(async () => { runs++; throw rollback('40P01'); }, 2)).rejects.toMatchObject({ code: '40P01' });
    expect(runs).toBe(2);
    runs = 0;
    await expect(retryRolledBack(async () => { runs++; throw Object.assign(new Error('unique'), { code: '23505' }); })).rejects.toMatchObject({ code: '23505' });
    expect(runs).toBe(1);
  });
});
