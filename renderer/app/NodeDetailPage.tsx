import { ScansPanel } from '../features/analytics/ScansPanel.tsx';
import { NodeDetail } from '../features/nodes/NodeDetail.tsx';
import { RulesEditor } from '../features/rules/RulesEditor.tsx';
import { NodeLabelPanel } from '../features/label-printing/NodeLabelPanel.tsx';
import { WriteNodeTag } from '../features/program-tags/WriteNodeTag.tsx';
import { TapProofPanel } from '../features/tap-proofs/TapProofPanel.tsx';

/** Composition at the app level: the node page hosts the rules, analytics, label, NFC and tag verification features as tabs. */
export function NodeDetailPage({ slug }: { slug: string }) {
  return (
    <NodeDetail
      slug={slug}
      tabs={[
        { id: 'rules', label: 'Routing rules', render: (n) => <RulesEditor slug={n.slug} /> },
        { id: 'scans', label: 'Scans & analytics', render: (n, reload) => <ScansPanel node={n} onNodeChanged={reload} /> },
        { id: 'label', label: 'Print label', render: (n) => <NodeLabelPanel node={n} /> },
        { id: 'nfc', label: 'Write NFC tag', render: (n) => <WriteNodeTag node={n} /> },
        { id: 'tap-proof', label: 'Tag verification', render: (n) => <TapProofPanel node={n} /> },
      ]}
    />
  );
}
