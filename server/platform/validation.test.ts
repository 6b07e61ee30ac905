import { describe, expect, it } from 'vitest';
import { CreateNodeBody } from '../schemas/nodes.ts';
import { WifiPayload } from '../schemas/payloads.ts';
import { ValidationError } from './errors.ts';
import { parseOrThrow } from './validation.ts';

function details(fn: () => unknown): Record<string, string> | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ValidationError) return err.details;
    throw err;
  }
  return undefined;
}

describe('parseOrThrow', () => {
  it('tells a missing field from a wrong one and names every unknown key', () => {
    expect(details(() => parseOrThrow(CreateNodeBody, { label: 123, payload: [], extra: 1, more: 2 }))).toEqual({
      label: 'must be a string',
      function_type: 'is required',
      payload: 'must be an object',
      extra: 'is not a known field',
      more: 'is not a known field',
    });
  });

  it('lists the allowed function types', () => {
    expect(details(() => parseOrThrow(CreateNodeBody, { label: 'x', function_type: 'fax', payload: {} }))).toEqual({
      function_type: 'must be one of: redirect, vcard, wifi, microsite, digital_card, action',
    });
  });

  it('prefixes nested paths (payload.*) and keeps conditional messages', () => {
    expect(details(() => parseOrThrow(WifiPayload, { ssid: 'Cafe', security: 'WPA2' }, 'payload'))).toEqual({
      'payload.password': 'is required for WPA2',
    });
    expect(details(() => parseOrThrow(WifiPayload, { ssid: 'Cafe', security: 'WPA2', password: 'short' }, 'payload'))).toEqual({
      'payload.password': 'must be 8 to 63 characters for WPA',
    });
    expect(parseOrThrow(WifiPayload, { ssid: 'Cafe', security: 'nopass' })).toEqual({ ssid: 'Cafe', security: 'nopass' });
  });
});
