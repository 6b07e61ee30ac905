/*
 * What makes two conflict log entries the same conflict: the remote finds a lost change on push
 * and sends it down, the site finds the same change lost on pull, a replay finds it again. Each
 * instance keeps one entry per key (migration 067).
 */

/** The site id of a writer id `site_id/incarnation`; null for anything else. */
export function siteOfWriter(writer: unknown): string | null {
  if (typeof writer !== 'string') return null;
  const slash = writer.indexOf('/');
  return slash > 0 ? writer.slice(0, slash) : null;
}

/**
 * The losing change (its entity and version) names the conflict; a serial clash is one per serial
 * and pair of nodes, whichever of the two arrived second. Null: no key (block conflicts, which
 * are the instance's own and logged once at pairing).
 */
export function conflictKey(kind: string, detail: Record<string, unknown>): string | null {
  if (kind === 'block_conflict') return null;
  if (kind === 'serial_clash' && typeof detail.serial === 'string' && typeof detail.holder === 'string') {
    const pair = [String(detail.entity_id), detail.holder].sort();
    return `serial_clash ${detail.serial} ${pair.join(' ')}`;
  }
  const entity = typeof detail.entity === 'string' ? detail.entity : 'node';
  if (typeof detail.entity_id !== 'string' || typeof detail.hlc !== 'string' || typeof detail.writer !== 'string') return null;
  return `${kind} ${entity} ${detail.entity_id} ${detail.writer} ${detail.hlc}`;
}
