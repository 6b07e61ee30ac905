import { Link } from './Link.tsx';
import { Notice } from './States.tsx';

export interface ProvisionalSerialsNoticeProps {
  batch: { prefix: string; serials_provisional: boolean };
}

/**
 * Before a batch's labels are printed: serials a paired site numbered itself, because its sync
 * remote could not be reached, may repeat another offline site's (docs/sync.md, "Batch serials").
 */
export function ProvisionalSerialsNotice({ batch }: ProvisionalSerialsNoticeProps) {
  if (!batch.serials_provisional) return null;
  return (
    <div data-testid="provisional-serials">
      <Notice kind="warning">
        <strong>Provisional serials.</strong> This site could not reach its sync remote when the batch was made, so it numbered the {batch.prefix} serials itself: another site offline at the same time may
        print the same serials. A repeat shows as a serial clash on the <Link to="/sync">Sync</Link> screen once both sites have synced.
      </Notice>
    </div>
  );
}
