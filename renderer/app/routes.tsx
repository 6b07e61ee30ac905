import { lazy, type ReactNode } from 'react';
import { match } from '../lib/router.ts';
import { NodesPage } from '../features/nodes/NodesPage.tsx';

// The first screen (Nodes) is in the main bundle; the others load on demand.
const CreateNodePage = lazy(() => import('../features/nodes/CreateNodePage.tsx').then((m) => ({ default: m.CreateNodePage })));
const ImportNodesPage = lazy(() => import('../features/nodes/ImportNodesPage.tsx').then((m) => ({ default: m.ImportNodesPage })));
const NodeDetailPage = lazy(() => import('./NodeDetailPage.tsx').then((m) => ({ default: m.NodeDetailPage })));
const OrgAnalyticsPage = lazy(() => import('../features/org-analytics/OrgAnalyticsPage.tsx').then((m) => ({ default: m.OrgAnalyticsPage })));
const BatchesPage = lazy(() => import('../features/batches/BatchesPage.tsx').then((m) => ({ default: m.BatchesPage })));
const BatchDetailPage = lazy(() => import('../features/batches/BatchDetailPage.tsx').then((m) => ({ default: m.BatchDetailPage })));
const ProgramTagsPage = lazy(() => import('../features/nfc/ProgramTagsPage.tsx').then((m) => ({ default: m.ProgramTagsPage })));
const TagFeedback = lazy(() => import('../features/program-tags/TagFeedback.tsx').then((m) => ({ default: m.TagFeedback })));
const PrintLabelsPage = lazy(() => import('../features/printing/PrintLabelsPage.tsx').then((m) => ({ default: m.PrintLabelsPage })));
const TemplatesPage = lazy(() => import('../features/templates/TemplatesPage.tsx').then((m) => ({ default: m.TemplatesPage })));
const WebhooksPage = lazy(() => import('../features/webhooks/WebhooksPage.tsx').then((m) => ({ default: m.WebhooksPage })));
const ApiKeysPage = lazy(() => import('../features/api-keys/ApiKeysPage.tsx').then((m) => ({ default: m.ApiKeysPage })));
const SyncPage = lazy(() => import('../features/sync/SyncPage.tsx').then((m) => ({ default: m.SyncPage })));
const SettingsPage = lazy(() => import('../features/settings/SettingsPage.tsx').then((m) => ({ default: m.SettingsPage })));

interface RouteDef {
  pattern: string;
  render(params: Record<string, string>): ReactNode;
}

export const ROUTES: RouteDef[] = [
  { pattern: '/nodes', render: () => <NodesPage /> },
  { pattern: '/nodes/new', render: () => <CreateNodePage /> },
  { pattern: '/nodes/import', render: () => <ImportNodesPage /> },
  { pattern: '/nodes/:slug', render: (p) => <NodeDetailPage key={p.slug} slug={p.slug!} /> },
  { pattern: '/analytics', render: () => <OrgAnalyticsPage /> },
  { pattern: '/batches', render: () => <BatchesPage /> },
  { pattern: '/batches/:id', render: (p) => <BatchDetailPage key={p.id} id={p.id!} /> },
  {
    pattern: '/program-tags',
    // The success/failure banner and beeps (from the NFC event stream) above the session screen.
    render: () => (
      <>
        <TagFeedback />
        <ProgramTagsPage />
      </>
    ),
  },
  { pattern: '/print', render: () => <PrintLabelsPage /> },
  { pattern: '/templates', render: () => <TemplatesPage /> },
  { pattern: '/webhooks', render: () => <WebhooksPage /> },
  { pattern: '/api-keys', render: () => <ApiKeysPage /> },
  { pattern: '/sync', render: () => <SyncPage /> },
  { pattern: '/settings', render: () => <SettingsPage /> },
];

export function resolveRoute(path: string): ReactNode | null {
  for (const route of ROUTES) {
    const params = match(route.pattern, path);
    if (params) return route.render(params);
  }
  return null;
}
