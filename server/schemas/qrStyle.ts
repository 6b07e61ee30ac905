import { z } from 'zod';
import { oneOf, timestamp } from './common.ts';

/**
 * How a QR code looks: colours, module style, the organization's logo in the centre, a frame
 * with a call to action. One schema per option, shared by the QR endpoint's query, the label
 * print options and the organization's defaults, so every input is checked the same way.
 */

export const MODULE_STYLES = ['square', 'rounded', 'dots'] as const;
export type ModuleStyle = (typeof MODULE_STYLES)[number];

/** A call to action is one short line under the code: longer text would shrink below legibility. */
export const MAX_FRAME_TEXT = 24;

/** `#RRGGBB` (upper case), from `#rrggbb`, `rrggbb` or `#rgb` (the `#` is optional so a query needs no %23). */
export const hexColour = z
  .string({ error: 'must be a colour such as #1A2B3C' })
  .trim()
  .regex(/^#?([0-9a-fA-F]{6}|[0-9a-fA-F]{3})$/, 'must be a colour such as #1A2B3C (or 1A2B3C)')
  .transform((v) => {
    const hex = v.replace(/^#/, '').toUpperCase();
    return `#${hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex}`;
  })
  .meta({ description: 'An sRGB colour, #RRGGBB (the # may be left out; #RGB also accepted)', example: '#1D3557' });

export const moduleStyle = oneOf(MODULE_STYLES).meta({
  description: 'Shape of the dark modules: square, rounded (outer corners rounded) or dots. Finder patterns stay solid squares (rounded corners for rounded and dots).',
});

/** A call to action printed in a frame under the code; control characters are refused, the rest is escaped where drawn. */
export const frameText = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must not be empty')
  .max(MAX_FRAME_TEXT, `must be at most ${MAX_FRAME_TEXT} characters`)
  .regex(/^[^\p{Cc}\p{Cf}]*$/u, 'must be one line of plain text (no control characters)')
  .meta({ description: `Call to action printed in a frame under the code, e.g. "Scan me" (1–${MAX_FRAME_TEXT} characters).`, example: 'Scan for the menu' });

/** An effective style: defaults with the request's options laid over them. */
export interface QrStyleT {
  fg: string;
  bg: string;
  module_style: ModuleStyle;
  /** Put the organization's logo in the centre. */
  logo: boolean;
  /** null: no frame. */
  frame_text: string | null;
}

export const BUILT_IN_QR_STYLE: QrStyleT = { fg: '#000000', bg: '#FFFFFF', module_style: 'square', logo: false, frame_text: null };

const flag = z
  .enum(['true', 'false', '1', '0'], { error: () => 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

/**
 * Style options as query parameters (the QR endpoint, label PDFs and previews). Each one left
 * out takes the organization's default. `frame=false` drops a default frame.
 */
export const qrStyleQueryFields = {
  fg: hexColour.optional().meta({ description: "Colour of the dark modules (and the frame). Default: the organization's, else #000000." }),
  bg: hexColour.optional().meta({ description: "Background colour, quiet zone included. Default: the organization's, else #FFFFFF." }),
  style: moduleStyle.optional().meta({ description: "Module style: square, rounded or dots. Default: the organization's, else square." }),
  logo: flag.optional().meta({ description: "Put the organization's logo in the centre (error correction H). Default: the organization's setting." }),
  frame: flag.optional().meta({ description: "Draw the frame with the call to action (false drops the organization's default frame)." }),
  frame_text: frameText.optional(),
};

/** The style options as a request gave them. */
export interface QrStyleRequest {
  fg?: string | undefined;
  bg?: string | undefined;
  style?: ModuleStyle | undefined;
  logo?: boolean | undefined;
  frame?: boolean | undefined;
  frame_text?: string | undefined;
}

export const QrLogoInfo = z
  .object({
    content_type: z.literal('image/png').meta({ description: 'Logos are kept as PNG: an SVG upload is rasterised at upload.' }),
    width: z.number().int(),
    height: z.number().int(),
    bytes: z.number().int(),
    uploaded_as: oneOf(['image/png', 'image/svg+xml']),
    updated_at: timestamp,
  })
  .meta({ id: 'QrLogoInfo' });
export type QrLogoInfoT = z.infer<typeof QrLogoInfo>;

export const QrStyleDefaults = z
  .object({
    fg: z.string(),
    bg: z.string(),
    module_style: oneOf(MODULE_STYLES),
    logo: z.boolean().meta({ description: 'Codes carry the logo unless a request says logo=false.' }),
    frame_text: z.string().nullable().meta({ description: 'Call to action framed under every code (null: no frame).' }),
    logo_image: QrLogoInfo.nullable().meta({ description: 'The uploaded logo (null: none).' }),
    updated_at: timestamp.nullable().meta({ description: 'When the defaults last changed (null: never set).' }),
  })
  .meta({ id: 'QrStyleDefaults' });
export type QrStyleDefaultsT = z.infer<typeof QrStyleDefaults>;

export const UpdateQrStyleBody = z
  .strictObject({
    fg: hexColour.optional(),
    bg: hexColour.optional(),
    module_style: moduleStyle.optional(),
    logo: z.boolean({ error: 'must be true or false' }).optional(),
    frame_text: frameText.nullable().optional().meta({ description: 'null removes the default frame.' }),
  })
  .meta({ id: 'UpdateQrStyleBody' });

/** Largest logo upload (decoded bytes): a logo is drawn a few centimetres wide at most. */
export const MAX_LOGO_BYTES = 256 * 1024;
export const LOGO_CONTENT_TYPES = ['image/png', 'image/svg+xml'] as const;

export const UploadQrLogoBody = z
  .strictObject({
    content_type: oneOf(LOGO_CONTENT_TYPES),
    data_base64: z
      .string({ error: 'must be a base64 string' })
      .max(Math.ceil(MAX_LOGO_BYTES / 3) * 4 + 4, `must be at most ${MAX_LOGO_BYTES / 1024} KiB once decoded`)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64 (A-Z a-z 0-9 + /, = padding)')
      .meta({ description: `The file, base64-encoded (at most ${MAX_LOGO_BYTES / 1024} KiB decoded).` }),
  })
  .meta({ id: 'UploadQrLogoBody' });
