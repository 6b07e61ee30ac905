import type { z } from 'zod';
import { ValidationError } from './errors.ts';

/**
 * Turns zod issues into the spec's `details` map: dotted field path → message. Unknown keys
 * get one entry each, so the console can mark the exact field.
 */
export function issuesToDetails(issues: readonly z.core.$ZodIssue[], prefix = ''): Record<string, string> {
  const details: Record<string, string> = {};
  const put = (path: PropertyKey[], message: string) => {
    const key = [prefix, ...path.map(String)].filter((p) => p !== '').join('.') || '_';
    if (!(key in details)) details[key] = message;
  };
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) put([...issue.path, k], 'is not a known field');
    } else if (issue.code !== 'custom' && 'input' in issue && issue.input === undefined) {
      put(issue.path, 'is required');
    } else {
      put(issue.path, issue.message);
    }
  }
  return details;
}

/** Parses `value` with `schema` or throws a 422 ValidationError with dotted paths. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): z.infer<S> {
  // reportInput lets a missing field ("is required") be told from a wrong one.
  const result = schema.safeParse(value, { reportInput: true });
  if (!result.success) throw new ValidationError(issuesToDetails(result.error.issues, prefix));
  return result.data;
}
