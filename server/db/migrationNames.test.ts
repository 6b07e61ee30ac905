import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultMigrationsDir } from './migrate.ts';
import { postgresMigrationsDir } from './postgresStore.ts';

/**
 * Both runners record applied migrations by whole file name, so a file once shipped keeps its
 * name for ever (renaming it would run it again). Two PostgreSQL files share the number 064 from
 * parallel branches; they stay as they are (docs/decisions.md, "Migration names"), and no other
 * number may be used twice.
 */
const SHIPPED_TWINS = new Set(['064_batch_leases.sql', '064_scans_many_processes.sql']);

function duplicatedNumbers(dir: string): string[] {
  const files = readdirSync(dir).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f));
  const byNumber = new Map<string, string[]>();
  for (const f of files) byNumber.set(f.slice(0, 3), [...(byNumber.get(f.slice(0, 3)) ?? []), f]);
  return [...byNumber.values()].filter((names) => names.length > 1).flat().sort();
}

describe('migration file names', () => {
  it('give each SQLite migration its own number', () => {
    expect(duplicatedNumbers(defaultMigrationsDir)).toEqual([]);
  });

  it('give each PostgreSQL migration its own number, but for the two 064 files already shipped', () => {
    expect(duplicatedNumbers(postgresMigrationsDir)).toEqual([...SHIPPED_TWINS].sort());
  });

  it('are applied in name order, so the two 064 files always run in the same order', () => {
    const files = readdirSync(postgresMigrationsDir).filter((f) => SHIPPED_TWINS.has(f)).sort();
    expect(files).toEqual(['064_batch_leases.sql', '064_scans_many_processes.sql']);
  });
});
