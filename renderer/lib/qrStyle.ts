/**
 * The organization's QR code style (GET/PATCH /v1/organization/qr-style), its logo and the
 * preview the settings card shows while the form is edited.
 */
import type { z } from 'zod';
import { type ModuleStyle, QrStyleDefaults, type UpdateQrStyleBody } from '../../server/schemas/qrStyle.ts';
import { ApiError, send } from './api.ts';

export type QrStyleDefaultsT = z.infer<typeof QrStyleDefaults>;
export type UpdateQrStyleInput = z.input<typeof UpdateQrStyleBody>;

/** What the settings form holds (the preview's query and, once saved, the PATCH body). */
export interface QrStyleForm {
  fg: string;
  bg: string;
  module_style: ModuleStyle;
  logo: boolean;
  frame_text: string;
}

async function defaults(res: Response, what: string): Promise<QrStyleDefaultsT> {
  const body = (await res.json()) as { data?: unknown };
  const parsed = QrStyleDefaults.safeParse(body.data);
  if (!parsed.success) throw new ApiError(0, `Unexpected response from the server (${what}).`);
  return parsed.data;
}

function base64Of(bytes: ArrayBuffer): string {
  let binary = '';
  const view = new Uint8Array(bytes);
  for (let i = 0; i < view.length; i += 0x8000) binary += String.fromCharCode(...view.subarray(i, i + 0x8000));
  return btoa(binary);
}

export const qrStyleApi = {
  get: async () => defaults(await send('GET', '/organization/qr-style'), 'GET /organization/qr-style'),
  update: async (body: UpdateQrStyleInput) => defaults(await send('PATCH', '/organization/qr-style', { body }), 'PATCH /organization/qr-style'),
  uploadLogo: async (file: File) => {
    const content_type = file.type === 'image/svg+xml' || file.name.toLowerCase().endsWith('.svg') ? 'image/svg+xml' : 'image/png';
    const body = { content_type, data_base64: base64Of(await file.arrayBuffer()) };
    return defaults(await send('PUT', '/organization/qr-style/logo', { body }), 'PUT /organization/qr-style/logo');
  },
  deleteLogo: async () => defaults(await send('DELETE', '/organization/qr-style/logo'), 'DELETE /organization/qr-style/logo'),
  /** A sample code in the form's style (unsaved), as an SVG blob. */
  preview: async (form: QrStyleForm, signal?: AbortSignal): Promise<Blob> => {
    const query = {
      fg: form.fg,
      bg: form.bg,
      style: form.module_style,
      logo: form.logo,
      frame: form.frame_text.trim() !== '',
      frame_text: form.frame_text.trim() || undefined,
    };
    const res = await send('GET', '/organization/qr-style/preview', { query, ...(signal ? { signal } : {}) });
    return res.blob();
  },
};
