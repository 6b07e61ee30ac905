import { ScansPanel } from '../features/analytics/ScansPanel.tsx';
import { NodeDetail } from '../features/nodes/NodeDetail.tsx';
import { RulesEditor } from '../features/rules/RulesEditor.tsx';

/** Composition at the app level: the node page hosts the rules and analytics features as tabs. */
export function NodeDetailPage({ slug }: { slug: string }) {
  return (
    <NodeDetail
      slug={slug}
      tabs={[
        { id: 'rules', label: 'Routing rules', render: (n) => <RulesEditor slug={n.slug} /> },
        { id: 'scans', label: 'Scans & analytics', render: (n) => <ScansPanel slug={n.slug} /> },
      ]}
    />
  );
}
