import { ConflictError } from '../../platform/errors.ts';
import { scanBaseReach } from './scanBaseReach.ts';

/** The 409 for a permanent label or tag on a scan base no phone can reach. */
export class LocalScanBaseError extends ConflictError {
  constructor(scanBase: string, what: string) {
    super(
      `Set a scan domain first: the scan base ${scanBase} is a loopback address, so no phone can open the ${what}. ` +
        'Set one in the console (Settings) or with PATCH /v1/organization {"scan_base": "https://…"}; ' +
        'for a test, send allow_local_scan_base=true.',
    );
  }
}

/**
 * Labels and NFC writes carry a URL meant to be permanent: refused while the scan base is
 * loopback, unless the request asks for a test (`allow_local_scan_base`). A LAN address passes
 * (the console warns that only phones on the site's network can open it).
 */
export function assertPermanentScanBase(scanBase: string, allowLocal: boolean | undefined, what: 'labels' | 'tag'): void {
  if (allowLocal === true) return;
  if (scanBaseReach(scanBase) === 'loopback') throw new LocalScanBaseError(scanBase, what === 'labels' ? 'codes printed with it' : 'tag written with it');
}
