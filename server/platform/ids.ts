import { randomUUID } from 'node:crypto';

/** Resource identifiers are UUIDs (spec: node id "described as a UUID"). */
export function newId(): string {
  return randomUUID();
}
