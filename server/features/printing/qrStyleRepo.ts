import type { Executor } from '../../db/store.ts';

export interface QrStyleRow {
  org_id: string;
  fg: string;
  bg: string;
  module_style: string;
  logo: number;
  frame_text: string | null;
  logo_png: string | null;
  logo_width: number | null;
  logo_height: number | null;
  logo_uploaded_as: string | null;
  logo_updated_at: string | null;
  updated_at: string;
}

const COLUMNS = ['org_id', 'fg', 'bg', 'module_style', 'logo', 'frame_text', 'logo_png', 'logo_width', 'logo_height', 'logo_uploaded_as', 'logo_updated_at', 'updated_at'] as const;

/** An organization's default QR style and logo (migration 077): one row per organization. */
export class QrStyleRepo {
  get(db: Executor, orgId: string): Promise<QrStyleRow | undefined> {
    return db.selectFrom('qr_styles').select(COLUMNS).where('org_id', '=', orgId).executeTakeFirst();
  }

  /** Inserts or replaces the organization's row. */
  async put(db: Executor, row: QrStyleRow): Promise<void> {
    const { org_id: _id, ...rest } = row;
    await db
      .insertInto('qr_styles')
      .values(row)
      .onConflict((oc) => oc.column('org_id').doUpdateSet(rest))
      .execute();
  }
}
