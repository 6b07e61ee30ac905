import { z } from 'zod';
import { documentedAs, oneOf, pagination, queryInt, text, timestamp } from './common.ts';
import { allowLocalScanBaseQuery } from './organization.ts';
import { type QrStyleRequest, qrStyleQueryFields } from './qrStyle.ts';

/**
 * Label layouts are data (resources/layouts/*.json), validated with this schema when the
 * server starts. Every length is in millimetres; the origin is the top-left corner of the page.
 */
const mm = (min: number, max: number) =>
  z
    .number({ error: 'must be a number (millimetres)' })
    .min(min, `must be at least ${min} mm`)
    .max(max, `must be at most ${max} mm`);

/** How far the label grid may run past the page edge through rounding in a layout file. */
const FIT_TOLERANCE_MM = 0.05;

export const LAYOUT_KINDS = ['sheet', 'roll'] as const;

export const LabelLayout = z
  .strictObject({
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be lower-case letters, digits and -'),
    name: z.string().min(1, 'must not be empty').max(200),
    kind: oneOf(LAYOUT_KINDS).meta({ description: 'sheet: a page of labels; roll: one label per page (label printers).' }),
    page: z.strictObject({ width: mm(10, 1200), height: mm(10, 1200) }),
    margin: z.strictObject({ top: mm(0, 1000), left: mm(0, 1000) }).meta({ description: 'From the page edge to the first label.' }),
    columns: z.number().int('must be a whole number').min(1).max(50),
    rows: z.number().int('must be a whole number').min(1).max(100),
    label: z.strictObject({
      width: mm(5, 1200),
      height: mm(5, 1200),
      corner_radius: mm(0, 50).optional().meta({ description: 'Only for the preview outline; never printed.' }),
    }),
    gap: z.strictObject({ x: mm(0, 500), y: mm(0, 500) }).meta({ description: 'Between neighbouring labels.' }),
    padding: mm(0, 50).meta({ description: 'Kept blank inside each label edge (die-cut and feed tolerance).' }),
  })
  .superRefine((l, ctx) => {
    const right = l.margin.left + l.columns * l.label.width + (l.columns - 1) * l.gap.x;
    const bottom = l.margin.top + l.rows * l.label.height + (l.rows - 1) * l.gap.y;
    if (right > l.page.width + FIT_TOLERANCE_MM) {
      ctx.addIssue({ code: 'custom', path: ['columns'], message: `labels run ${(right - l.page.width).toFixed(2)} mm past the right page edge` });
    }
    if (bottom > l.page.height + FIT_TOLERANCE_MM) {
      ctx.addIssue({ code: 'custom', path: ['rows'], message: `labels run ${(bottom - l.page.height).toFixed(2)} mm past the bottom page edge` });
    }
    if (2 * l.padding >= Math.min(l.label.width, l.label.height)) {
      ctx.addIssue({ code: 'custom', path: ['padding'], message: 'leaves no room inside the label' });
    }
  })
  .meta({ id: 'LabelLayout' });
export type LabelLayoutT = z.infer<typeof LabelLayout>;

/** GET /v1/layouts items: the layout file plus what the console needs to draw a preview. */
export const LayoutInfo = z
  .object({
    id: z.string(),
    name: z.string(),
    kind: oneOf(LAYOUT_KINDS),
    page: z.object({ width: z.number(), height: z.number() }),
    margin: z.object({ top: z.number(), left: z.number() }),
    columns: z.number().int(),
    rows: z.number().int(),
    label: z.object({ width: z.number(), height: z.number(), corner_radius: z.number().optional() }),
    gap: z.object({ x: z.number(), y: z.number() }),
    padding: z.number(),
    labels_per_page: z.number().int(),
    /** Every label's rectangle on the page, in reading order (mm, top-left origin). */
    slots: z.array(z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() })),
  })
  .meta({ id: 'LabelLayoutInfo' });
export type LayoutInfoT = z.infer<typeof LayoutInfo>;

export const CAPTIONS = ['serial', 'slug', 'label', 'none'] as const;
export type Caption = (typeof CAPTIONS)[number];

export const DEFAULT_LAYOUT_ID = 'avery-l7160';
export const MAX_OFFSET_MM = 10;

const offsetRange = z
  .number({ error: 'must be a number of millimetres' })
  .min(-MAX_OFFSET_MM, `must be at least -${MAX_OFFSET_MM}`)
  .max(MAX_OFFSET_MM, `must be at most ${MAX_OFFSET_MM}`);

/** A decimal query value in millimetres (arrives as a string; documented as a number). */
const offsetMm = z
  .string()
  .regex(/^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$/, 'must be a number of millimetres, e.g. -0.5')
  .transform(Number)
  .pipe(offsetRange)
  .optional()
  .meta({
    description: `Calibration offset in mm (−${MAX_OFFSET_MM}…${MAX_OFFSET_MM}); positive moves the print right / down. Default: the printer profile's, else 0.`,
    override: documentedAs({ type: 'number', minimum: -MAX_OFFSET_MM, maximum: MAX_OFFSET_MM }),
  });

const layoutId = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be a layout id from GET /v1/layouts');

const booleanFlag = z
  .enum(['true', 'false', '1', '0'], { error: () => 'must be true or false' })
  .optional()
  .transform((v) => v === 'true' || v === '1');

/** The print options shared by the batch sheet and the single label. */
export const printOptionFields = {
  layout: layoutId
    .optional()
    .meta({ description: `Layout id from GET /v1/layouts (default: the printer profile's layout, else ${DEFAULT_LAYOUT_ID}).` }),
  printer: z
    .string()
    .max(100)
    .optional()
    .meta({ description: 'A printer profile id (GET /v1/printers): its offsets and layout apply unless given here.' }),
  caption: oneOf(CAPTIONS)
    .optional()
    .transform((v) => v ?? 'serial')
    .meta({ description: 'Text under each code (default serial; a node without a serial shows its slug).' }),
  cut_marks: booleanFlag.meta({ description: 'Draw cut marks in the page margins (default false).' }),
  offset_x: offsetMm,
  offset_y: offsetMm,
  start: queryInt(0, Number.MAX_SAFE_INTEGER, 0).meta({
    description: 'Labels already used on the first sheet (0 = start at the top-left label).',
  }),
  ...qrStyleQueryFields,
};

/** GET /v1/batches/{id}/manifest?format=pdf&… */
export const ManifestPdfQuery = z.strictObject({ format: z.literal('pdf'), ...printOptionFields, allow_local_scan_base: allowLocalScanBaseQuery });

/** GET /v1/nodes/{slug}/label.pdf?… */
export const LabelPdfQuery = z.strictObject({ ...printOptionFields, allow_local_scan_base: allowLocalScanBaseQuery });

/** GET /v1/batches/{id}/preview.svg and /v1/nodes/{slug}/label.svg: one page of the print. */
export const PreviewQuery = z.strictObject({
  ...printOptionFields,
  page: queryInt(1, Number.MAX_SAFE_INTEGER, 1).meta({
    description: 'Page of the print to preview, from 1 (default 1); X-Page-Count tells how many.',
  }),
});

/** GET /v1/layouts/{id}/calibration.pdf?offset_x&offset_y&printer */
export const CalibrationQuery = z.strictObject({ offset_x: offsetMm, offset_y: offsetMm, printer: printOptionFields.printer });

/** Print options as the request gave them; the service fills the gaps from the printer profile and the organization's QR style. */
export interface PrintQuery extends QrStyleRequest {
  layout?: string | undefined;
  printer?: string | undefined;
  caption: Caption;
  cut_marks: boolean;
  offset_x?: number | undefined;
  offset_y?: number | undefined;
  start: number;
}

/** Print options once resolved. */
export interface PrintOptions {
  layout: string;
  caption: Caption;
  cut_marks: boolean;
  offset_x: number;
  offset_y: number;
  start: number;
}

/** A printer (and paper tray) with its calibration: offsets every print on it should use. */
export const Printer = z
  .object({
    id: z.string(),
    name: z.string(),
    layout: z.string().nullable().meta({ description: 'The layout usually loaded in this printer (null: none).' }),
    offset_x: z.number().meta({ description: 'mm; + moves the print right' }),
    offset_y: z.number().meta({ description: 'mm; + moves the print down' }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Printer' });
export type PrinterT = z.infer<typeof Printer>;

export const CreatePrinterBody = z
  .strictObject({
    name: text(100),
    layout: layoutId.nullable().optional(),
    offset_x: offsetRange.optional(),
    offset_y: offsetRange.optional(),
  })
  .meta({ id: 'CreatePrinterBody' });

export const UpdatePrinterBody = z
  .strictObject({
    name: text(100).optional(),
    layout: layoutId.nullable().optional(),
    offset_x: offsetRange.optional(),
    offset_y: offsetRange.optional(),
  })
  .meta({ id: 'UpdatePrinterBody' });

export const ListPrintersQuery = z.strictObject({ ...pagination });
