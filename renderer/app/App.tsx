import { Suspense, useEffect, useRef, useState } from 'react';
import { Link } from '../components/Link.tsx';
import { PageHeader } from '../components/PageHeader.tsx';
import { Empty, Loading } from '../components/States.tsx';
import { Toasts } from '../components/Toasts.tsx';
import { SignIn } from '../features/auth/SignIn.tsx';
import { ScanDomainPrompt } from '../features/settings/ScanDomainPrompt.tsx';
import { SyncIndicator } from '../features/sync/SyncIndicator.tsx';
import { api } from '../lib/api.ts';
import { navigate, useRouter } from '../lib/router.ts';
import { useSession } from '../lib/session.ts';
import { useResource } from '../lib/useResource.ts';
import { NAV } from './nav.ts';
import { resolveRoute } from './routes.tsx';

export function App() {
  const key = useSession((s) => s.key);
  return (
    <>
      {key ? <Shell /> : <SignIn />}
      <Toasts />
    </>
  );
}

function Shell() {
  const path = useRouter((s) => s.path);
  const desktop = useSession((s) => s.desktop);
  const signOut = useSession((s) => s.signOut);
  const instance = useResource(() => api.instance(), []);
  // On narrow screens the navigation folds behind a menu button (CSS shows it open on wide ones).
  // Opened at a path: going to another screen closes it without an effect.
  const [menuOpenAt, setMenuOpenAt] = useState<string | null>(null);
  const menuOpen = menuOpenAt === path;
  const setMenuOpen = (open: boolean) => setMenuOpenAt(open ? path : null);
  const menuButton = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    if (path === '/' || path === '') navigate('/nodes', { replace: true });
  }, [path]);

  useEffect(() => {
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [path]);

  const content = resolveRoute(path);
  return (
    <div className="shell">
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <aside
        className={`sidebar${menuOpen ? ' sidebar-open' : ''}`}
        onKeyDown={(e) => {
          if (e.key !== 'Escape' || !menuOpen) return;
          setMenuOpen(false);
          menuButton.current?.focus();
        }}
      >
        <div className="sidebar-bar">
          <div className="brand">
            <span className="brand-mark" aria-hidden="true" />
            <span>Waymark</span>
          </div>
          <button
            ref={menuButton}
            type="button"
            className="menu-button"
            aria-expanded={menuOpen}
            aria-controls="sidebar-panel"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            <svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true">
              <path d={menuOpen ? 'M6 6l12 12M18 6L6 18' : 'M4 7h16M4 12h16M4 17h16'} fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
            </svg>
            Menu
          </button>
        </div>
        <div id="sidebar-panel" className="sidebar-panel">
          <nav aria-label="Main">
            {(['work', 'admin'] as const).map((section) => (
              <ul key={section} className="nav-list">
                {section === 'admin' ? <li className="nav-heading">Administration</li> : null}
                {NAV.filter((n) => n.section === section).map((item) => {
                  const active = path === item.to || path.startsWith(`${item.to}/`);
                  return (
                    <li key={item.to}>
                      <Link to={item.to} className={`nav-link${active ? ' active' : ''}`} aria-current={active ? 'page' : undefined}>
                        <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" className="nav-icon">
                          <path d={item.icon} fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round" />
                        </svg>
                        {item.label}
                      </Link>
                    </li>
                  );
                })}
              </ul>
            ))}
          </nav>
          <div className="sidebar-footer">
            <SyncIndicator />
            <div className="org" title={instance.data?.organization.id}>
              <span className="org-name">{instance.data?.organization.name ?? ' '}</span>
              <span className="org-meta">{instance.data ? `v${instance.data.version} · ${instance.data.key.plan} key` : ' '}</span>
            </div>
            {desktop ? null : (
              <button type="button" className="btn btn-ghost btn-sm" onClick={() => signOut()}>
                Sign out
              </button>
            )}
          </div>
        </div>
      </aside>
      <main id="main" className="main" tabIndex={-1}>
        <ScanDomainPrompt />
        <Suspense fallback={<Loading />}>
          {content ?? (
            <>
              <PageHeader title="Page not found" />
              <Empty title="There is no console page at this address" action={<Link to="/nodes">Go to nodes</Link>} />
            </>
          )}
        </Suspense>
      </main>
    </div>
  );
}
