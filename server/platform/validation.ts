import type { z } from 'zod';
import { ValidationError } from './errors.ts';

/**
 * Turns zod issues into the spec's `details` map: dotted field path → message. Unknown keys
 * get one entry each, so the console can mark the exact field.
 */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[], prefix = ''): Record<string, string> {
  // A Map, not an object literal: a field named `__proto__` (hostile input) must still be
  // reported, and `details[key] = …` would silently set the prototype instead.
  const details = new Map<string, string>();
  const put = (path: PropertyKey[], message: string) => {
    const key = [prefix, ...path.map(String)].filter((p) => p !== '').join('.') || '_';
    if (!details.has(key)) details.set(key, message);
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) put([...issue.path, k], 'is not a known field');
    } else if ((issue.code === 'invalid_type' || issue.code === 'invalid_value') && issue.input === undefined) {
      // A missing enum field (function_type, rule_type …) is an invalid_value issue.
      put(issue.path, 'is required');
    } else {
      put(issue.path, issue.message);
    }
  }
  return Object.fromEntries(details);
}

/** Parses `value` with `schema` or throws a 422 ValidationError with dotted paths. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.infer<S> {
  // reportInput: without it zod leaves `issue.input` unset on every issue, and a value of the
  // wrong type (`"label": 5`) would be reported as missing ("is required").
  const result = schema.safeParse(value, { reportInput: true });
  if (!result.success) throw new ValidationError(issuesToDetails(result.error.issues, prefix));
  return result.data;
}
