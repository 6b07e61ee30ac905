import { z } from 'zod';
import { qrStyleQueryFields } from './qrStyle.ts';
import { SCAN_SOURCES } from './tapProofs.ts';
import { functionType, oneOf, queryInt, timestamp } from './common.ts';

export const INTERVALS = ['hour', 'day', 'week'] as const;
export type Interval = (typeof INTERVALS)[number];

const ISO_INSTANT_TEXT = 'must be an ISO 8601 date or timestamp such as 2026-11-01 or 2026-11-01T00:00:00Z';
const isoInstant = z
  .string()
  .regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?$/, ISO_INSTANT_TEXT)
  .refine((s) => !Number.isNaN(Date.parse(s)), ISO_INSTANT_TEXT);

export const AnalyticsQuery = z
  .object({
    from: isoInstant.optional().meta({ description: 'Start (inclusive). Default: 30 days before `to`. Rounded down to the hour.' }),
    to: isoInstant.optional().meta({ description: 'End (exclusive). Default: now. Rounded up to the hour.' }),
    interval: oneOf(INTERVALS).optional().meta({ description: 'Time-series bucket (UTC). Default: day.' }),
  })
  .meta({ id: 'AnalyticsQuery' });

export const OrgAnalyticsQuery = AnalyticsQuery.extend({
  top: queryInt(1, 100, 10).meta({ description: 'How many top nodes to list (default 10).' }),
}).meta({ id: 'OrgAnalyticsQuery' });

const Count = z.object({ value: z.string().nullable(), scans: z.number().int() });
const Bucket = z.object({ start: timestamp, scans: z.number().int(), unique_visitors: z.number().int() });

export const Breakdowns = z.object({
  device_type: z.array(Count),
  os: z.array(Count),
  browser: z.array(Count),
  country: z.array(Count),
  source: z.array(Count),
  rule: z.array(Count).meta({ description: 'By matched rule id; null = the node\'s own payload.' }),
  outcome: z.array(Count),
});

export const SplitVariant = z
  .object({
    rule_id: z.string().nullable().meta({ description: 'The variant\'s traffic_split rule; null = the node\'s own payload, for the visitors the split rules leave.' }),
    weight: z.number().int().meta({ description: 'Percent of visitors assigned to it (the rule\'s weight; for null, what the enabled rules leave).' }),
    enabled: z.boolean(),
    function_type: functionType,
    scans: z.number().int(),
    unique_visitors: z.number().int(),
  })
  .meta({ id: 'SplitVariant' });

export const SplitTest = z
  .object({
    since: timestamp.meta({ description: 'Figures count from here: the later of `from` and the hour the oldest variant was created.' }),
    variants: z.array(SplitVariant),
  })
  .meta({ id: 'SplitTest' });

export const NodeAnalytics = z
  .object({
    node: z.object({ id: z.string(), slug: z.string() }),
    from: timestamp,
    to: timestamp,
    interval: oneOf(INTERVALS),
    totals: z.object({ scans: z.number().int(), unique_visitors: z.number().int() }),
    series: z.array(Bucket),
    breakdowns: Breakdowns,
    split_test: SplitTest.nullable().meta({ description: 'Per-variant figures while the node has traffic_split rules; null otherwise.' }),
  })
  .meta({ id: 'NodeAnalytics' });

export const OrgAnalytics = z
  .object({
    from: timestamp,
    to: timestamp,
    interval: oneOf(INTERVALS),
    totals: z.object({ scans: z.number().int(), unique_visitors: z.number().int(), nodes_scanned: z.number().int() }),
    series: z.array(Bucket),
    breakdowns: Breakdowns,
    top_nodes: z.array(z.object({ id: z.string(), slug: z.string(), label: z.string(), scans: z.number().int() })),
  })
  .meta({ id: 'OrgAnalytics' });

export const ScansQuery = z
  .object({
    limit: queryInt(1, 100, 50),
    offset: queryInt(0, Number.MAX_SAFE_INTEGER, 0),
    from: isoInstant.optional(),
    to: isoInstant.optional(),
    bots: oneOf(['exclude', 'include', 'only'] as const).optional().meta({ description: 'Default exclude.' }),
    format: oneOf(['json', 'csv'] as const).optional(),
  })
  .meta({ id: 'ScansQuery' });

export const ScanEvent = z
  .object({
    id: z.number().int(),
    timestamp,
    device_type: z.string(),
    os: z.string(),
    browser: z.string().nullable(),
    country: z.string().nullable(),
    source: z.enum(SCAN_SOURCES).meta({ description: 'qr; nfc_verified (a tag URL whose tap proof was valid, docs/nfc.md); nfc_unverified (a tag URL without a valid proof: `?nfc`, a failed, replayed or missing proof).' }),
    rule_id: z.string().nullable(),
    outcome: z.string(),
    bot: z.boolean(),
    visitor: z.string().meta({ description: 'Daily visitor key (changes every UTC day; no IP is stored).' }),
  })
  .meta({ id: 'ScanEvent' });

export const QrQuery = z
  .object({
    format: oneOf(['svg', 'png'] as const).optional(),
    size: queryInt(64, 4096, 512).meta({ description: 'Width in pixels (PNG) / nominal width (SVG). Default 512.' }),
    ecc: oneOf(['L', 'M', 'Q', 'H'] as const).optional().meta({ description: 'Error correction level. Default M; always H when the code carries the logo.' }),
    margin: queryInt(0, 20, 4).meta({ description: 'Quiet zone in modules. Default 4 (at least 4 with a frame).' }),
    ...qrStyleQueryFields,
  })
  .meta({ id: 'QrQuery' });
