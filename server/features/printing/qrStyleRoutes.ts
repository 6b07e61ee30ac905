import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { oneOf, queryInt } from '../../schemas/common.ts';
import { QrStyleDefaults, UpdateQrStyleBody, UploadQrLogoBody, qrStyleQueryFields } from '../../schemas/qrStyle.ts';
import type { QrStyleService } from './qrStyleService.ts';

const PNG_CONTENT = { 'image/png': { schema: z.string().meta({ description: 'A PNG image' }) } };
const UNREADABLE = { description: 'Colours a reader may fail on: contrast under 4.5:1, or light modules on a dark background (the message names both colours and the ratio)' };

/** What the preview encodes: any URL of the same length gives the same symbol size. */
export const PREVIEW_TEXT = 'HTTPS://SCAN.EXAMPLE.COM/V/K3M9QX2P';

const PreviewQrQuery = z.strictObject({
  format: oneOf(['svg', 'png'] as const).optional(),
  size: queryInt(64, 2048, 320).meta({ description: 'Width in pixels (default 320).' }),
  ...qrStyleQueryFields,
});

/** The organization's QR code style: defaults, logo and a preview for the console. */
export function qrStyleRoutes(qrStyles: QrStyleService) {
  return [
    defineRoute({
      method: 'get',
      path: '/organization/qr-style',
      operationId: 'getQrStyle',
      summary: "The organization's default QR code style (colours, module style, logo, frame)",
      tags: ['Organization'],
      responses: { 200: { description: 'The defaults', schema: QrStyleDefaults } },
      handler: async ({ auth }) => ({ data: await qrStyles.defaults(auth.orgId) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/organization/qr-style',
      operationId: 'updateQrStyle',
      summary: 'Change the default QR code style used by the QR endpoint and label prints',
      tags: ['Organization'],
      body: UpdateQrStyleBody,
      bodyExample: { fg: '#1D3557', bg: '#F1FAEE', module_style: 'rounded', frame_text: 'Scan for the menu' },
      responses: { 200: { description: 'The defaults', schema: QrStyleDefaults }, 400: { description: `${UNREADABLE.description}; or a body that is not a JSON object` } },
      handler: async ({ auth, body }) => ({ data: await qrStyles.updateDefaults(auth.orgId, body) }),
    }),
    defineRoute({
      method: 'put',
      path: '/organization/qr-style/logo',
      operationId: 'uploadQrLogo',
      summary: 'Upload the logo put in the centre of codes (PNG, or SVG rasterised at upload); 422 for a refused file',
      tags: ['Organization'],
      body: UploadQrLogoBody,
      bodyLimit: '512kb',
      responses: { 200: { description: 'The defaults with the new logo', schema: QrStyleDefaults } },
      handler: async ({ auth, body }) => ({ data: await qrStyles.uploadLogo(auth.orgId, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/organization/qr-style/logo',
      operationId: 'getQrLogo',
      summary: 'The logo as kept (a PNG)',
      tags: ['Organization'],
      responses: { 200: { description: 'The logo', content: PNG_CONTENT }, 404: { description: 'No logo' } },
      handler: async ({ auth, res }) => {
        res.status(200).type('image/png').setHeader('Cache-Control', 'no-store').send(await qrStyles.logoPng(auth.orgId));
        return undefined;
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/organization/qr-style/logo',
      operationId: 'deleteQrLogo',
      summary: 'Remove the logo (codes stop carrying it)',
      tags: ['Organization'],
      responses: { 200: { description: 'The defaults', schema: QrStyleDefaults }, 404: { description: 'No logo' } },
      handler: async ({ auth }) => ({ data: await qrStyles.deleteLogo(auth.orgId) }),
    }),
    defineRoute({
      method: 'get',
      path: '/organization/qr-style/preview',
      operationId: 'previewQrStyle',
      summary: 'A sample code in the default style, with any style option laid over it (the console previews unsaved settings with it)',
      tags: ['Organization'],
      query: PreviewQrQuery,
      responses: {
        200: { description: 'A sample code', content: { 'image/svg+xml': { schema: z.string() }, ...PNG_CONTENT } },
        400: UNREADABLE,
      },
      handler: async ({ auth, query, res }) => {
        const resolved = await qrStyles.resolve(auth.orgId, query);
        const file = qrStyles.renderFile(PREVIEW_TEXT, resolved, { format: query.format ?? 'svg', size: query.size, ecc: 'Q', margin: 4 });
        res.status(200).type(file.contentType).setHeader('Cache-Control', 'no-store');
        if (file.contentType === 'image/svg+xml') res.setHeader('Content-Security-Policy', "default-src 'none'; img-src data:");
        res.send(file.body);
        return undefined;
      },
    }),
  ];
}
