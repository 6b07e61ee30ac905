import { expect } from 'vitest';
import type { ApiResponse, TestServer } from './server.ts';

/** A valid, complete payload for each function type. */
export const validPayloads = {
  redirect: { url: 'https://example.com/landing' },
  vcard: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone: '+44 20 7946 0000', organization: 'Engines', website: 'https://ada.example' },
  wifi: { ssid: 'Guest', password: 'correct-horse', security: 'WPA2' },
  microsite: { title: 'Welcome', body: 'Hello', theme_color: '#1A2B3C', links: [{ label: 'Docs', url: 'https://example.com/docs' }] },
  digital_card: { name: 'Ada Lovelace', job_title: 'Analyst', email: 'ada@example.com' },
  action: { action_type: 'whatsapp', phone: '+33 6 12 34 56 78', message: 'Hi' },
} as const;

export type FunctionTypeName = keyof typeof validPayloads;
export const FUNCTION_TYPES = Object.keys(validPayloads) as FunctionTypeName[];

export const SLUG_RE = /^[0-9A-HJKMNP-TV-Z]{8}$/;
export const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts the spec's error body: `{data: null, error}` (422 adds details). */
export function expectError(res: ApiResponse, status: number, error?: string | RegExp): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body?.data, res.text).toBeNull();
  expect(typeof res.body?.error).toBe('string');
  if (typeof error === 'string') expect(res.body.error).toBe(error);
  else if (error) expect(res.body.error).toMatch(error);
  const keys = Object.keys(res.body).sort();
  expect(keys).toEqual(status === 422 ? ['data', 'details', 'error'] : ['data', 'error']);
  if (status === 422) {
    expect(typeof res.body.details).toBe('object');
    for (const v of Object.values(res.body.details)) expect(typeof v).toBe('string');
  }
}

/** A 422 whose details name `field` (and optionally match its message). */
export function expectInvalid(res: ApiResponse, field: string, message?: string | RegExp, error = 'Validation failed'): void {
  expectError(res, 422, error);
  expect(Object.keys(res.body.details), res.text).toContain(field);
  if (typeof message === 'string') expect(res.body.details[field]).toBe(message);
  else if (message) expect(res.body.details[field]).toMatch(message);
}

export async function createNode(
  server: Pick<TestServer, 'api'>,
  type: FunctionTypeName = 'redirect',
  extra: Record<string, unknown> = {},
  key?: string,
): Promise<{ id: string; slug: string; url: string; function_type: string; status: string }> {
  const res = await server.api('POST', '/nodes', { label: `${type} node`, function_type: type, payload: validPayloads[type], ...extra }, key);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** Polls a batch until `predicate` holds (generation is asynchronous but fast). */
export async function waitForBatch(
  server: Pick<TestServer, 'api'>,
  id: string,
  predicate: (b: Record<string, unknown>) => boolean = (b) => b.status !== 'generating' && b.status !== 'pending',
  key?: string,
): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
  for (let i = 0; i < 1000; i++) {
    const res = await server.api('GET', `/batches/${id}`, undefined, key);
    expect(res.status, res.text).toBe(200);
    if (predicate(res.body.data)) return res.body.data;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`batch ${id} did not reach the expected state`);
}

