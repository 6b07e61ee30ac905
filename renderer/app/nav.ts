/**
 * The sidebar. A new screen (the NFC "Program tags" screen, printing) is one entry here and one
 * route in routes.tsx.
 */
export interface NavItem {
  to: string;
  label: string;
  icon: string;
  section: 'work' | 'admin';
}

export const NAV: NavItem[] = [
  { to: '/nodes', label: 'Nodes', icon: 'M4 6h16M4 12h16M4 18h10', section: 'work' },
  { to: '/analytics', label: 'Analytics', icon: 'M4 20h16M7 16v-5M12 16V6M17 16v-8', section: 'work' },
  { to: '/batches', label: 'Batches', icon: 'M4 5h16v4H4zM4 11h16v4H4zM4 17h16v2H4z', section: 'work' },
  { to: '/program-tags', label: 'Program tags', icon: 'M6 4h12v16H6zM9 9a4 4 0 0 1 6 0M10.5 11.5a2 2 0 0 1 3 0', section: 'work' },
  { to: '/print', label: 'Print labels', icon: 'M7 8V4h10v4M6 17H4v-7h16v7h-2M7 14h10v6H7z', section: 'work' },
  { to: '/templates', label: 'Templates', icon: 'M5 4h14v16H5zM9 8h6M9 12h6M9 16h3', section: 'work' },
  { to: '/webhooks', label: 'Webhooks', icon: 'M12 3v6M6 21l6-12 6 12M4 15h16', section: 'admin' },
  { to: '/sync', label: 'Sync', icon: 'M4 12a8 8 0 0 1 14-5.3M20 12a8 8 0 0 1-14 5.3M18 3v4h-4M6 21v-4h4', section: 'admin' },
  { to: '/api-keys', label: 'API keys', icon: 'M14 10a4 4 0 1 0-3.5 4L13 16.5V19h2.5v-2.5H18V14l-4-4z', section: 'admin' },
  { to: '/settings', label: 'Settings', icon: 'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM4 12h2M18 12h2M12 4v2M12 18v2', section: 'admin' },
];
