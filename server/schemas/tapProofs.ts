import { z } from 'zod';

export const TAP_PROOF_POLICIES = ['serve', 'refuse'] as const;
export type TapProofPolicy = (typeof TAP_PROOF_POLICIES)[number];

const policy = z.enum(TAP_PROOF_POLICIES).meta({
  description:
    "What a tag URL without a valid proof gets: 'serve' = the node's content as usual, recorded as source nfc_unverified; 'refuse' = a 403 page \"This tag could not be verified\" (nothing of the content).",
});

export const TapProofTag = z
  .object({
    uid: z.string().meta({ description: 'The tag UID, upper-case hex.' }),
    kind: z.string().meta({ description: 'Tap proof kind, e.g. ntag424 (NTAG 424 DNA SUN).' }),
    key_version: z.number().int().meta({ description: 'The organization master key version the tag was keyed from.' }),
    last_counter: z.number().int().meta({ description: 'Highest tap counter accepted (-1: none yet). A URL with a counter not above it is a replay.' }),
  })
  .meta({ id: 'TapProofTag' });

export const TapProofSettings = z
  .object({
    policy,
    tags: z.array(TapProofTag).meta({ description: 'The tags personalised for this node.' }),
  })
  .meta({ id: 'TapProofSettings' });

export const UpdateTapProofBody = z.strictObject({ policy }).meta({ id: 'UpdateTapProofBody' });

/** A scan's source (docs/scans.md): how the visitor reached the URL. */
export const SCAN_SOURCES = ['qr', 'nfc_verified', 'nfc_unverified'] as const;
export type ScanSource = (typeof SCAN_SOURCES)[number];
