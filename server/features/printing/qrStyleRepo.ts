import { z } from 'zod';
import type { Executor } from '../../db/store.ts';

/**
 * The stored default style (organization_settings.qr_style_json). Read leniently: the row also
 * arrives by sync, perhaps from an instance of another version (keys it does not know are
 * dropped; a value it cannot read counts as no style set).
 */
const StoredQrStyle = z.object({
  fg: z.string(),
  bg: z.string(),
  module_style: z.string(),
  logo: z.boolean(),
  frame_text: z.string().nullable(),
  updated_at: z.string(),
});
export type StoredQrStyleT = z.infer<typeof StoredQrStyle>;

/** The stored logo (organization_settings.qr_logo_json): the PNG as the server re-encoded it, base64. */
const StoredQrLogo = z.object({
  png: z.string().min(1),
  width: z.number(),
  height: z.number(),
  uploaded_as: z.string(),
  updated_at: z.string(),
});
export type StoredQrLogoT = z.infer<typeof StoredQrLogo>;

/** An organization's style and logo; null where none is set. */
export interface QrStyleRow {
  style: StoredQrStyleT | null;
  logo: StoredQrLogoT | null;
}

function parsed<T>(schema: z.ZodType<T>, text: string | null | undefined): T | null {
  if (!text) return null;
  try {
    const result = schema.safeParse(JSON.parse(text));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

/**
 * An organization's default QR style and logo: two fields of its settings row (migrations 066,
 * 086), each synced as a whole (docs/sync.md), so a style's colours always come from one writer.
 */
export class QrStyleRepo {
  async get(db: Executor, orgId: string): Promise<QrStyleRow> {
    const row = await db.selectFrom('organization_settings').select(['qr_style_json', 'qr_logo_json']).where('id', '=', orgId).executeTakeFirst();
    return { style: parsed(StoredQrStyle, row?.qr_style_json), logo: parsed(StoredQrLogo, row?.qr_logo_json) };
  }

  putStyle(db: Executor, orgId: string, style: StoredQrStyleT, at: string): Promise<void> {
    return this.put(db, orgId, { qr_style_json: JSON.stringify(style) }, at);
  }

  /** null removes the logo. */
  putLogo(db: Executor, orgId: string, logo: StoredQrLogoT | null, at: string): Promise<void> {
    return this.put(db, orgId, { qr_logo_json: logo === null ? null : JSON.stringify(logo) }, at);
  }

  /** Sets the fields on the organization's row, creating it if needed (the scan domain's updated_at is left alone). */
  private async put(db: Executor, orgId: string, set: { qr_style_json?: string; qr_logo_json?: string | null }, at: string): Promise<void> {
    await db
      .insertInto('organization_settings')
      .values({ id: orgId, org_id: orgId, scan_base: null, updated_at: at, ...set })
      .onConflict((oc) => oc.column('id').doUpdateSet(set))
      .execute();
  }
}
