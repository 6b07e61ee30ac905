/**
 * What a function type is: its payload schema (zod, in the type's schema.ts) and what a scan of
 * content of that type answers. Whether a payload is complete enough to serve is derived from
 * the schema, so the write path and the scan path cannot disagree.
 */
import type { z } from 'zod';
import type { Rendered } from '../features/scans/pages.ts';

export type ScanResponse = { kind: 'redirect'; location: string } | { kind: 'page'; rendered: Rendered };

export interface ScanLinks {
  /** Where this content's download (`/v/<slug>/contact.vcf`) is served. */
  contactHref: string;
}

export interface FunctionTypeSpec<S extends z.ZodType> {
  schema: S;
  /** The answer to a scan of a complete payload (computed once per content and cached). */
  respond(payload: z.infer<S>, links: ScanLinks): ScanResponse;
  /** The file served at `/v/<slug>/contact.vcf`, for types that have one. */
  contactFile?(payload: z.infer<S>): Rendered;
}

export interface FunctionTypeDef<S extends z.ZodType = z.ZodType> extends FunctionTypeSpec<S> {
  /** Whether a stored payload is complete and valid for this type (the schema's verdict). */
  isComplete(payload: unknown): payload is z.infer<S>;
}

export function defineFunctionType<S extends z.ZodType>(spec: FunctionTypeSpec<S>): FunctionTypeDef<S> {
  return {
    ...spec,
    isComplete: (payload: unknown): payload is z.infer<S> => spec.schema.safeParse(payload).success,
  };
}
