// A small client of the Waymark API, typed by the client that openapi-typescript generates from
// /v1/openapi.json (test/contract/typed-client.test.ts writes generated/waymark-api.ts, then
// type-checks and runs this program). Each `@ts-expect-error` line is a request the document
// forbids: if one of them compiled, tsc would fail on the unused directive.
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/waymark-api.ts';

type CreateNodeBody = components['schemas']['CreateNodeBody'];

const [base, key] = process.argv.slice(2);
if (!base || !key) throw new Error('usage: program.ts <server url> <api key>');
const client = createClient<paths>({ baseUrl: `${base}/v1`, headers: { authorization: `Bearer ${key}` } });

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`typed client: ${what}`);
}

// A Wi-Fi node: the payload is the WifiPayload component because function_type says wifi.
const wifi: CreateNodeBody = { label: 'Typed Wi-Fi', function_type: 'wifi', payload: { ssid: 'Cafe', password: 'correct horse', security: 'WPA2' } };
const created = await client.POST('/nodes', { body: wifi });
check(created.response.status === 201 && created.data !== undefined, `POST /nodes answered ${created.response.status}`);
const slug: string = created.data.data.slug;

const read = await client.GET('/nodes/{slug}', { params: { path: { slug } } });
check(read.data?.data.function_type === 'wifi', 'GET /nodes/{slug} returns the node');

// Integer query parameters are numbers to the client.
const page = await client.GET('/nodes', { params: { query: { limit: 10, offset: 0, function_type: 'wifi' } } });
check(page.data !== undefined && page.data.total >= 1, 'GET /nodes lists it');

// A template holds part of the payload; a node on it sends only the rest.
const template = await client.POST('/templates', { body: { name: 'Guests', function_type: 'wifi', payload: { ssid: 'Guests', security: 'nopass' }, locked_fields: ['ssid'] } });
check(template.data !== undefined, `POST /templates answered ${template.response.status}`);
const fromTemplate = await client.POST('/nodes', { body: { label: 'Lobby', function_type: 'wifi', template_id: template.data.data.id, payload: {} } });
check(fromTemplate.response.status === 201, `POST /nodes with a template answered ${fromTemplate.response.status}`);

// A rule: conditions typed by rule_type, payload by function_type.
const rule = await client.POST('/nodes/{slug}/rules', {
  params: { path: { slug } },
  body: { rule_type: 'geo_based', conditions: { countries: ['FR'] }, function_type: 'redirect', payload: { url: 'https://example.com/fr' } },
});
check(rule.response.status === 201, `POST /nodes/{slug}/rules answered ${rule.response.status}`);

// Requests the document forbids (never sent: this function is not called).
export function mustNotCompile(): void {
  // @ts-expect-error a Wi-Fi payload on a redirect node
  void client.POST('/nodes', { body: { label: 'x', function_type: 'redirect', payload: { ssid: 'Cafe' } } });
  // @ts-expect-error a function type that does not exist
  void client.POST('/nodes', { body: { label: 'x', function_type: 'fax', payload: { url: 'https://example.com' } } });
  // @ts-expect-error time_based conditions are a timezone and windows, not countries
  void client.POST('/nodes/{slug}/rules', { params: { path: { slug } }, body: { rule_type: 'time_based', conditions: { countries: ['FR'] }, function_type: 'redirect', payload: { url: 'https://example.com' } } });
  // @ts-expect-error limit is an integer, not a string
  void client.GET('/nodes', { params: { query: { limit: '10' } } });
}

console.log(`typed client ok: ${slug}`);
