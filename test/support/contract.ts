import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * Contract checks: every response the API tests receive through the shared client
 * (server.ts `apiRequest`) is held against the server's own /v1/openapi.json — the status is
 * documented for that operation, the content type is one it lists, the body matches its schema,
 * and the documented headers are there and well-formed. A request the server accepted (2xx) must
 * itself be valid by the document (body and query), so that a schema stricter than the server
 * fails too. Anything outside /v1 (scan URLs, /healthz, the console) is not part of the document.
 */

// ajv-formats is CommonJS (`module.exports = formatsPlugin`, with a `default` beside it): under
// Node's ESM the default import is the plugin itself, while its types describe the namespace.
type FormatsPlugin = (ajv: Ajv2020) => unknown;
const addFormats = addFormatsModule as unknown as FormatsPlugin;

type Json = Record<string, unknown>;

export interface ContractRequest {
  method: string;
  /** As sent, e.g. `/v1/nodes?limit=5`. */
  path: string;
  /** The JSON body sent, parsed (undefined when none or not JSON). */
  body?: unknown;
}

export interface ContractResponse {
  status: number;
  headers: Headers;
  text: string;
}

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  params: number;
  op: Json;
}

const SCHEMAS_ID = 'urn:waymark:openapi';

/** `#/components/schemas/X` → a ref into the one schema that holds all components as $defs. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof child === 'string' ? child.replace('#/components/schemas/', `${SCHEMAS_ID}#/$defs/`) : rewriteRefs(child);
  }
  return out;
}

export class ContractValidator {
  private readonly doc: Json;
  private readonly operations: Operation[] = [];
  private readonly ajv: Ajv2020;
  /** Query values arrive as strings: this one coerces them to the documented type. */
  private readonly queryAjv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(doc: Json) {
    this.doc = doc;
    const make = (coerceTypes: boolean) => {
      // strictRequired off: `anyOf: [{required: [a]}, {required: [b]}]` ("a or b") is meant.
      const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true, coerceTypes, allowUnionTypes: true });
      addFormats(ajv);
      // OpenAPI's own keywords in Schema Objects (annotations for validation).
      ajv.addKeyword('example');
      ajv.addKeyword('discriminator');
      const components = ((doc.components as Json | undefined)?.schemas ?? {}) as Json;
      ajv.addSchema({ $id: SCHEMAS_ID, $defs: rewriteRefs(components) });
      return ajv;
    };
    this.ajv = make(false);
    this.queryAjv = make(true);
    for (const [template, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item)) {
        const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+');
        this.operations.push({
          method: method.toUpperCase(),
          template,
          // Express routes match case-insensitively and with a trailing slash.
          pattern: new RegExp(`^/v1${source}/?$`, 'i'),
          params: (template.match(/\{/g) ?? []).length,
          op: op as Json,
        });
      }
    }
    // A literal segment wins over a parameter (as Express mounts them in order, all distinct here).
    this.operations.sort((a, b) => a.params - b.params);
  }

  /** Every way `response` (to `request`) departs from the document; empty when it conforms. */
  check(request: ContractRequest, response: ContractResponse): string[] {
    const url = new URL(request.path, 'http://contract.invalid');
    const path = url.pathname;
    if (!/^\/v1(\/|$)/i.test(path) || /^\/v1\/openapi\.json$/i.test(path)) return [];
    const method = request.method.toUpperCase();
    if (method === 'HEAD' || method === 'OPTIONS') return [];
    const operation = this.operations.find((o) => o.method === method && o.pattern.test(path));
    if (!operation) {
      // Not an operation: the catch-all 404, or the router's 400 for a path it cannot decode, in the error shape.
      if (response.status !== 404 && response.status !== 400) return [`${method} ${path}: no such operation, yet answered ${response.status}`];
      return this.checkBody(`${method} ${path} (no such operation) ${response.status}`, { schema: { $ref: `${SCHEMAS_ID}#/$defs/Error` } }, response);
    }
    const name = `${operation.op.operationId as string} (${method} ${operation.template})`;
    const responses = operation.op.responses as Record<string, Json>;
    const documented = responses[String(response.status)] ?? responses.default;
    if (!documented) return [`${name}: status ${response.status} is not documented (documented: ${Object.keys(responses).join(', ')}); body ${response.text.slice(0, 300)}`];
    const problems = [...this.checkHeaders(name, documented, response), ...this.checkContent(name, documented, response)];
    if (response.status >= 200 && response.status < 300) problems.push(...this.checkRequest(name, operation.op, request, url));
    return problems;
  }

  private checkHeaders(name: string, documented: Json, response: ContractResponse): string[] {
    const problems: string[] = [];
    for (const [header, spec] of Object.entries((documented.headers ?? {}) as Record<string, Json>)) {
      const resolved = this.resolve(spec);
      const value = response.headers.get(header);
      if (value === null) {
        if (resolved.required === true) problems.push(`${name} ${response.status}: header ${header} is documented as required but missing`);
        continue;
      }
      const validate = this.compile(`header:${header}:${JSON.stringify(resolved.schema)}`, resolved.schema as Json, this.ajv);
      if (!validate(value)) problems.push(`${name} ${response.status}: header ${header}: ${JSON.stringify(value)} ${this.ajv.errorsText(validate.errors)}`);
    }
    return problems;
  }

  private checkContent(name: string, documented: Json, response: ContractResponse): string[] {
    const content = documented.content as Record<string, Json> | undefined;
    const contentType = response.headers.get('content-type');
    if (!content) {
      return response.text === '' ? [] : [`${name} ${response.status}: no content is documented, yet the body is ${response.text.slice(0, 200)}`];
    }
    const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const media = content[mediaType];
    if (!media) return [`${name} ${response.status}: content type ${contentType ?? '(none)'} is not documented (documented: ${Object.keys(content).join(', ')})`];
    if (mediaType !== 'application/json') return [];
    return this.checkBody(`${name} ${response.status}`, media, response);
  }

  private checkBody(name: string, media: Json, response: ContractResponse): string[] {
    let body: unknown;
    try {
      body = JSON.parse(response.text);
    } catch {
      return [`${name}: the body is not JSON: ${response.text.slice(0, 200)}`];
    }
    const validate = this.compile(`body:${name}:${JSON.stringify(media.schema)}`, media.schema as Json, this.ajv);
    return validate(body) ? [] : [`${name}: body does not match the documented schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}; body ${response.text.slice(0, 500)}`];
  }

  /** A request the server accepted must be one the document allows. */
  private checkRequest(name: string, op: Json, request: ContractRequest, url: URL): string[] {
    const problems: string[] = [];
    const parameters = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'query');
    const query: Json = {};
    for (const [key, value] of url.searchParams) query[key] = value;
    for (const key of Object.keys(query)) {
      if (!parameters.some((p) => p.name === key)) problems.push(`${name}: accepted query parameter ${key}, which is not documented`);
    }
    for (const p of parameters) {
      const key = p.name as string;
      if (!(key in query)) {
        if (p.required === true) problems.push(`${name}: accepted a request without the required query parameter ${key}`);
        continue;
      }
      const holder = { value: query[key] };
      const validate = this.compile(`query:${name}:${key}`, { type: 'object', properties: { value: p.schema } }, this.queryAjv);
      if (!validate(holder)) problems.push(`${name}: accepted query ${key}=${String(query[key])}, which the document refuses: ${this.queryAjv.errorsText(validate.errors)}`);
    }
    const requestBody = op.requestBody as Json | undefined;
    const schema = ((requestBody?.content as Record<string, Json> | undefined)?.['application/json'])?.schema as Json | undefined;
    if (schema && request.body !== undefined) {
      const validate = this.compile(`request:${name}`, schema, this.ajv);
      if (!validate(request.body)) {
        problems.push(`${name}: accepted a body the document refuses: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}; body ${JSON.stringify(request.body).slice(0, 500)}`);
      }
    }
    return problems;
  }

  private resolve(spec: Json): Json {
    const ref = spec.$ref;
    if (typeof ref !== 'string') return spec;
    const [, kind, id] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
    const target = ((this.doc.components as Json)[kind!] as Json | undefined)?.[id!] as Json | undefined;
    if (!target) throw new Error(`unresolved ${ref}`);
    return target;
  }

  private compile(key: string, schema: Json, ajv: Ajv2020): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = ajv.compile(rewriteRefs(schema) as Json);
      this.compiled.set(key, validate);
    }
    return validate;
  }
}

const byDocument = new Map<string, ContractValidator>();
const byServer = new Map<string, Promise<ContractValidator>>();

/** The validator for the document a server serves (compiled once per distinct document). */
export function contractFor(base: string): Promise<ContractValidator> {
  let pending = byServer.get(base);
  if (!pending) {
    pending = (async () => {
      const res = await fetch(`${base}/v1/openapi.json`);
      if (res.status !== 200) throw new Error(`${base}/v1/openapi.json answered ${res.status}`);
      const text = await res.text();
      let validator = byDocument.get(text);
      if (!validator) {
        validator = new ContractValidator(JSON.parse(text) as Json);
        byDocument.set(text, validator);
      }
      return validator;
    })();
    byServer.set(base, pending);
    pending.catch(() => byServer.delete(base));
  }
  return pending;
}

export class ContractError extends Error {}

/** Throws when the response departs from the document the server serves. */
export async function assertContract(base: string, request: ContractRequest, response: ContractResponse): Promise<void> {
  const path = new URL(request.path, 'http://contract.invalid').pathname;
  if (!/^\/v1(\/|$)/i.test(path)) return;
  const problems = (await contractFor(base)).check(request, response);
  // Compiling a schema can hold the event loop for seconds on a loaded machine: let it see the
  // keep-alive connections the server closed meanwhile, so the test's next request does not
  // pick one of them ("other side closed").
  await new Promise((resolve) => setImmediate(resolve));
  if (problems.length > 0) throw new ContractError(`API contract: ${request.method} ${request.path}\n  ${problems.join('\n  ')}`);
}
