import { Link } from './Link.tsx';
import { Notice } from './States.tsx';
import { useOrganization } from '../lib/organization.ts';

export interface ScanBaseCheckProps {
  /** What is about to be made permanent: printed labels or written tags. */
  what: 'labels' | 'tags';
  /** The "test print / test tag" choice (allow_local_scan_base). */
  test: boolean;
  onTestChange(test: boolean): void;
}

/**
 * Before a label is printed or a tag written (their URL is permanent): on a loopback scan base
 * (no phone can open it) the server refuses unless this is a test, so the screen says why and
 * offers the test; on a LAN address it warns that only phones on the site's network can open it.
 */
export function ScanBaseCheck({ what, test, onTestChange }: ScanBaseCheckProps) {
  const { organization } = useOrganization();
  if (!organization || organization.scan_base_reach === 'public') return null;
  const noun = what === 'labels' ? 'labels printed' : 'tags written';
  if (organization.scan_base_reach === 'lan') {
    return (
      <Notice kind="warning">
        The scan domain <code className="break">{organization.scan_base}</code> is a local network address: only phones on the site’s Wi-Fi can open the {noun} now.{' '}
        <Link to="/settings">Set a public scan domain</Link> if they will be scanned elsewhere.
      </Notice>
    );
  }
  return (
    <div className="scan-base-check" data-testid="scan-base-check">
      <Notice kind="warning">
        No scan domain is set: the scan base <code className="break">{organization.scan_base}</code> is this computer, so no phone can open the {noun} with it.{' '}
        <Link to="/settings">Set a scan domain</Link> first, or make a test.
      </Notice>
      <label className="checkbox">
        <input type="checkbox" checked={test} onChange={(e) => onTestChange(e.target.checked)} />
        {what === 'labels' ? 'Test print (labels no phone can open)' : 'Test tag (a tag no phone can open)'}
      </label>
    </div>
  );
}
