import { z } from 'zod';
import { oneOf } from './common.ts';

export const SCAN_BASE_REACH = ['loopback', 'lan', 'public'] as const;

/** Why an address is not a scan domain, or null when it is one: an http(s) origin, nothing after the host. */
function scanBaseProblem(value: string): string | null {
  if (!/^https?:\/\//i.test(value)) return 'must start with https:// or http://';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an address such as https://w.example.com';
  }
  if (!url.hostname) return 'must name a host, such as https://w.example.com';
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.pathname !== '/' || url.search || url.hash || /[?#]/.test(value)) {
    return 'must be an origin only (scheme, host and optional port, such as https://w.example.com): scan URLs add /v/<slug>';
  }
  return null;
}

/** A scan domain as sent: checked, then kept as its origin (lower-case host, no trailing slash). */
export const ScanBaseInput = z
  .string({ error: 'must be a string (an https:// or http:// origin) or null' })
  .trim()
  .max(200, 'must be at most 200 characters')
  .superRefine((value, ctx) => {
    const problem = scanBaseProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform((value) => new URL(value).origin)
  .meta({ description: 'An https:// or http:// origin, such as https://w.example.com', example: 'https://w.example.com' });

export const UpdateOrganizationBody = z
  .strictObject({
    scan_base: ScanBaseInput.nullable().meta({
      description: "The scan domain printed on labels and written on tags: scan URLs are {scan_base}/v/<slug>. null = the instance's default (--scan-base).",
    }),
  })
  .meta({ id: 'UpdateOrganizationBody' });

export const Organization = z
  .object({
    id: z.string(),
    name: z.string(),
    scan_base: z.string().meta({ description: 'The scan domain in effect: scan URLs are {scan_base}/v/<slug>.' }),
    scan_base_source: oneOf(['organization', 'instance']).meta({ description: "organization: set with PATCH /organization; instance: the instance's default (--scan-base)." }),
    instance_scan_base: z.string().meta({ description: "The instance's default (--scan-base), used while the organization sets none." }),
    scan_base_reach: oneOf(SCAN_BASE_REACH).meta({
      description:
        'Who can open the scan URLs: loopback = this machine only (labels and NFC writes are refused without allow_local_scan_base=true), lan = phones on the local network only, public = anyone.',
    }),
    scan_base_updated_at: z.string().nullable().meta({ description: 'When the organization last set its scan domain (null: never).' }),
  })
  .meta({ id: 'Organization' });
export type OrganizationT = z.infer<typeof Organization>;

/** `allow_local_scan_base=true` on the label and manifest PDFs: a test print on a loopback scan base. */
export const allowLocalScanBaseQuery = z
  .enum(['true', 'false'], { error: () => 'must be true or false' })
  .transform((v) => v === 'true')
  .optional()
  .meta({ description: 'Print although the scan base is loopback (a test print: no phone can open these codes).' });

/** The body field of NFC writes. */
export const allowLocalScanBaseBody = z
  .boolean({ error: 'must be true or false' })
  .optional()
  .meta({ description: 'Write although the scan base is loopback (a test tag: no phone can open it).' });
