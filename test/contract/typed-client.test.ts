import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, startTestServer, type TestServer } from '../support/server.ts';

const run = promisify(execFile);
const dir = join(import.meta.dirname, 'typed-client');
const generated = join(dir, 'generated');
const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');

async function typecheck(project: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [tsc, '--noEmit', '-p', project], { cwd: repoRoot });
    return { code: 0, output: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('a client generated from /v1/openapi.json (openapi-typescript + openapi-fetch)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ limits: 'unlimited' });
    const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as Parameters<typeof openapiTS>[0];
    rmSync(generated, { recursive: true, force: true });
    mkdirSync(generated, { recursive: true });
    writeFileSync(join(generated, 'waymark-api.ts'), astToString(await openapiTS(doc)));
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('type-checks a program that uses it, where each request the document forbids fails to compile', async () => {
    const { code, output } = await typecheck(join(dir, 'tsconfig.json'));
    expect(output).toBe('');
    expect(code).toBe(0);
  }, 120_000);

  it('without the @ts-expect-error directives, exactly those lines fail to compile', async () => {
    // The control: the directives above are not decoration; each marks a line tsc refuses.
    const source = readFileSync(join(dir, 'program.ts'), 'utf8').split('\n');
    const expected: number[] = [];
    const stripped = source.map((line, i) => {
      if (!line.includes('// @ts-expect-error')) return line;
      expected.push(i + 2); // the line after the directive, 1-based
      return '';
    });
    writeFileSync(join(generated, 'program-unchecked.ts'), stripped.join('\n').replace("from './generated/waymark-api.ts'", "from './waymark-api.ts'"));
    writeFileSync(
      join(generated, 'tsconfig.unchecked.json'),
      JSON.stringify({ extends: '../../../../tsconfig.json', include: ['program-unchecked.ts', 'waymark-api.ts'], exclude: [] }),
    );
    const { code, output } = await typecheck(join(generated, 'tsconfig.unchecked.json'));
    expect(code).not.toBe(0);
    const failing = [...new Set([...output.matchAll(/program-unchecked\.ts\((\d+),\d+\): error/g)].map((m) => Number(m[1])))];
    expect(expected.length).toBeGreaterThanOrEqual(4);
    expect(failing.sort((a, b) => a - b)).toEqual(expected);
  }, 120_000);

  it('runs against the server: create, read, list, a node on a template and a rule', async () => {
    const { stdout } = await run(process.execPath, [join(dir, 'program.ts'), server.url, server.apiKey], { cwd: repoRoot });
    expect(stdout).toMatch(/^typed client ok: [0-9A-Z]{8}/);
  }, 60_000);
});
