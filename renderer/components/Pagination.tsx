import { formatNumber } from '../lib/format.ts';
import { Button } from './Button.tsx';

export interface PaginationProps {
  offset: number;
  limit: number;
  total: number;
  onChange(offset: number): void;
  label?: string;
}

/** Server-side paging: only one page is ever loaded, whatever the total. */
export function Pagination({ offset, limit, total, onChange, label = 'Pagination' }: PaginationProps) {
  if (total === 0) return null;
  const from = offset + 1;
  const to = Math.min(offset + limit, total);
  const page = Math.floor(offset / limit) + 1;
  const pages = Math.max(1, Math.ceil(total / limit));
  return (
    <nav className="pagination" aria-label={label}>
      <span className="pagination-info">
        {formatNumber(from)}–{formatNumber(to)} of {formatNumber(total)}
      </span>
      <div className="pagination-buttons">
        <Button size="sm" onClick={() => onChange(0)} disabled={offset === 0} aria-label="First page">
          «
        </Button>
        <Button size="sm" onClick={() => onChange(Math.max(0, offset - limit))} disabled={offset === 0}>
          Previous
        </Button>
        <span className="pagination-page" aria-current="page">
          Page {formatNumber(page)} of {formatNumber(pages)}
        </span>
        <Button size="sm" onClick={() => onChange(offset + limit)} disabled={to >= total}>
          Next
        </Button>
        <Button size="sm" onClick={() => onChange((pages - 1) * limit)} disabled={to >= total} aria-label="Last page">
          »
        </Button>
      </div>
    </nav>
  );
}
