import type { z } from 'zod';

export type FieldErrors = Record<string, string>;

/**
 * zod issues → the same dotted-path map the server answers in a 422's `details`, so client-side
 * and server-side errors land on the same fields.
 */
export function issuesToErrors(issues: readonly z.core.$ZodIssue[], prefix = ''): FieldErrors {
  const errors: FieldErrors = {};
  const put = (path: PropertyKey[], message: string) => {
    const key = [prefix, ...path.map(String)].filter((p) => p !== '').join('.') || '_';
    if (!(key in errors)) errors[key] = message;
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
  return errors;
}

export function validate<S extends z.ZodType>(schema: S, value: unknown, prefix = ''): { ok: true; data: z.infer<S> } | { ok: false; errors: FieldErrors } {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return { ok: true, data: result.data };
  return { ok: false, errors: issuesToErrors(result.error.issues, prefix) };
}

/** The errors under `prefix.` with the prefix removed (`payload.url` → `url`). */
export function scoped(errors: FieldErrors, prefix: string): FieldErrors {
  const out: FieldErrors = {};
  for (const [k, v] of Object.entries(errors)) {
    if (k === prefix) out._ = v;
    else if (k.startsWith(`${prefix}.`)) out[k.slice(prefix.length + 1)] = v;
  }
  return out;
}

/** "is required" → "Label is required"; messages that start with a capital stay as they are. */
export function sentence(field: string, message: string): string {
  if (/^[A-Z]/.test(message)) return message;
  return `${field} ${message}`;
}
