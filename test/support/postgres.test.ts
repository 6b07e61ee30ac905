// The plumbing PostgreSQL suites stand on: `npm test` starts a private cluster and hands it over
// as WAYMARK_TEST_DATABASE (scripts/with-postgres.ts); a suite that needs it skips (or, under CI,
// fails) through needs.postgres() when it is not there.
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { needs } from './system.ts';

describe.skipIf(needs.postgres())('the private PostgreSQL test cluster', () => {
  it('accepts a connection on 127.0.0.1 and a write', async () => {
    const url = new URL(process.env.WAYMARK_TEST_DATABASE!);
    expect(url.hostname).toBe('127.0.0.1');
    const client = new pg.Client({ connectionString: url.href });
    await client.connect();
    try {
      await client.query('CREATE TEMP TABLE smoke (n int)');
      await client.query('INSERT INTO smoke VALUES ($1), ($2)', [1, 2]);
      const { rows } = await client.query<{ total: number }>('SELECT sum(n)::int AS total FROM smoke');
      expect(rows[0]!.total).toBe(3);
      const { rows: [version] } = await client.query<{ server_version_num: string }>('SHOW server_version_num');
      expect(Number(version!.server_version_num)).toBeGreaterThanOrEqual(150000);
    } finally {
      await client.end();
    }
  });
});
