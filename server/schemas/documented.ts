import { z } from 'zod';

/**
 * Document-only unions. They describe in /v1/openapi.json what a body may contain once its
 * `function_type` or `rule_type` is known; the server still parses with the plain request schema
 * and checks the typed part in the service, so that errors keep the spec's paths and messages.
 * zod renders a union as `anyOf`; these are exclusive, so they are written as `oneOf`.
 */

type JsonSchema = Record<string, unknown>;

function asOneOf(jsonSchema: JsonSchema): void {
  if (jsonSchema.anyOf) {
    jsonSchema.oneOf = jsonSchema.anyOf;
    delete jsonSchema.anyOf;
  }
}

/** Component name of a schema registered with `.meta({ id })`. */
function componentId(schema: z.ZodType): string {
  const id = schema.meta()?.id;
  if (typeof id !== 'string') throw new Error('each variant of a discriminated union needs an id (it is the mapping target)');
  return id;
}

/**
 * Mutually exclusive object alternatives: `oneOf`, marked `type: object` so that it may be the
 * target of a discriminator mapping (which must name an object schema).
 */
export function exclusive(variants: readonly z.ZodType[], id?: string) {
  return z.union(variants as [z.ZodType, z.ZodType, ...z.ZodType[]]).meta({
    ...(id ? { id } : {}),
    override: ({ jsonSchema }: { jsonSchema: JsonSchema }) => {
      asOneOf(jsonSchema);
      jsonSchema.type = 'object';
    },
  });
}

/**
 * `oneOf` with an OpenAPI discriminator: `property` (a literal in each variant) selects the
 * variant, so a generated client narrows on it (openapi-typescript makes a tagged union).
 */
export function discriminated(property: string, variants: Record<string, z.ZodType>, id?: string, description?: string) {
  const options = Object.values(variants);
  const mapping = Object.fromEntries(Object.entries(variants).map(([value, schema]) => [value, `#/components/schemas/${componentId(schema)}`]));
  return z.union(options as [z.ZodType, z.ZodType, ...z.ZodType[]]).meta({
    ...(id ? { id } : {}),
    ...(description ? { description } : {}),
    override: ({ jsonSchema }: { jsonSchema: JsonSchema }) => {
      asOneOf(jsonSchema);
      jsonSchema.discriminator = { propertyName: property, mapping };
    },
  });
}

/**
 * All of the parts at once, and no property that none of them names (`unevaluatedProperties`).
 * Parts must not carry an OpenAPI `discriminator`: client generators read an allOf over one as
 * inheritance (openapi-typescript would type the whole as a subtype of that part).
 */
export function allOf(parts: readonly [z.ZodType, z.ZodType, ...z.ZodType[]], id: string, description?: string) {
  const [first, ...rest] = parts;
  const joined = rest.reduce<z.ZodType>((acc, part) => z.intersection(acc, part), first);
  return joined.meta({
    id,
    ...(description ? { description } : {}),
    override: ({ jsonSchema }: { jsonSchema: JsonSchema }) => {
      jsonSchema.allOf = flattenAllOf(jsonSchema);
      for (const key of Object.keys(jsonSchema)) if (key !== 'allOf' && key !== 'description') delete jsonSchema[key];
      jsonSchema.type = 'object';
      jsonSchema.unevaluatedProperties = false;
    },
  });
}

function flattenAllOf(jsonSchema: JsonSchema): JsonSchema[] {
  const parts = (jsonSchema.allOf as JsonSchema[] | undefined) ?? [];
  return parts.flatMap((p) => (p.allOf && Object.keys(p).length === 1 ? flattenAllOf(p) : [p]));
}

/** The same fields, each optional: what a template may set, or a node on a template may send. */
export function partialStrict(shape: Record<string, z.ZodType>) {
  return z.strictObject(Object.fromEntries(Object.entries(shape).map(([key, field]) => [key, field.optional()])));
}

/** `digital_card` → `DigitalCard`, for component names. */
export function pascal(name: string): string {
  return name.replace(/(^|_)([a-z])/g, (_m, _sep: string, c: string) => c.toUpperCase());
}
