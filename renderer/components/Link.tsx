import type { AnchorHTMLAttributes, MouseEvent } from 'react';
import { BASE, navigate } from '../lib/router.ts';

/** An in-console link: a real href (open in new tab works), client-side navigation on plain clicks. */
export function Link({ to, onClick, ...rest }: Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string }) {
  return (
    <a
      href={`${BASE}${to}`}
      onClick={(e: MouseEvent<HTMLAnchorElement>) => {
        onClick?.(e);
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
      {...rest}
    />
  );
}
