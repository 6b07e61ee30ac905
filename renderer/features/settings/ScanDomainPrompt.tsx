import { useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { useOrganization } from '../../lib/organization.ts';
import { useRouter } from '../../lib/router.ts';
import { ScanDomainForm } from './ScanDomainForm.tsx';

const DISMISSED = 'waymark.scanDomainPrompt';

function wasDismissed(): boolean {
  try {
    return window.localStorage.getItem(DISMISSED) === 'dismissed';
  } catch {
    return false;
  }
}

/**
 * The console's first start on a loopback scan base asks for a scan domain: labels and tags made
 * with this one open on no phone. Not a modal: the console stays usable; "Not now" hides it in
 * this browser (Settings keeps the form).
 */
export function ScanDomainPrompt() {
  const { organization } = useOrganization();
  const path = useRouter((s) => s.path);
  const [dismissed, setDismissed] = useState(wasDismissed);
  if (dismissed || !organization || organization.scan_base_reach !== 'loopback' || path.startsWith('/settings')) return null;
  const dismiss = () => {
    try {
      window.localStorage.setItem(DISMISSED, 'dismissed');
    } catch {
      // Private mode without storage: hidden for this page's life only.
    }
    setDismissed(true);
  };
  return (
    <section className="first-run" aria-label="Set a scan domain" data-testid="scan-domain-prompt">
      <p className="first-run-title">Where will phones open your tags?</p>
      <p>
        Labels and NFC tags carry a permanent address. This server's is <code className="break">{organization.scan_base}</code>, which only this computer can
        open: set the public address (scan domain) that phones will use before printing labels or writing tags.
      </p>
      <ScanDomainForm organization={organization} compact />
      <Button size="sm" variant="ghost" onClick={dismiss}>
        Not now
      </Button>
    </section>
  );
}
