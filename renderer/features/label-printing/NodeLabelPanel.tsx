import { LabelPrinter } from '../../components/LabelPrinter.tsx';
import type { NodeT } from '../../lib/api.ts';
import { printingApi } from '../../lib/printing.ts';

/** Node page tab: print this node's label (GET /v1/nodes/{slug}/label.svg and label.pdf). */
export function NodeLabelPanel({ node }: { node: NodeT }) {
  return (
    <LabelPrinter
      subject={`Label of ${node.serial ?? node.slug}`}
      subjectKey={node.slug}
      prefer="roll"
      preview={(o, page) => printingApi.nodeLabelSvg(node.slug, o, page)}
      pdf={(o, test) => printingApi.nodeLabelPdf(node.slug, o, test)}
    />
  );
}
