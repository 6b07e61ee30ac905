import { type FormEvent, type ReactNode, useState } from 'react';
import { FUNCTION_TYPES, type FunctionType } from '../../../server/schemas/common.ts';
import { UpdateNodeBody } from '../../../server/schemas/nodes.ts';
import { payloadSchemas } from '../../../server/schemas/payloads.ts';
import { StatusBadge } from '../../components/Badge.tsx';
import { Button, FormActions } from '../../components/Button.tsx';
import { CopyButton } from '../../components/CopyButton.tsx';
import { ConfirmDialog } from '../../components/Dialog.tsx';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, Loading, Notice } from '../../components/States.tsx';
import { Tabs } from '../../components/Tabs.tsx';
import { PayloadForm } from '../../components/payload/PayloadForm.tsx';
import { cleanPayload, mergePatch } from '../../components/payload/fields.ts';
import { ApiError, api, type NodeT } from '../../lib/api.ts';
import { formatDate, formatNumber, typeLabel } from '../../lib/format.ts';
import { navigate, useSearchParams } from '../../lib/router.ts';
import { toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';
import { useFormSubmit } from '../../lib/useFormSubmit.ts';
import { scoped, validate } from '../../lib/validation.ts';
import { NodeLimits } from './NodeLimits.tsx';
import { QrPreview } from './QrPreview.tsx';

export interface NodeTab {
  id: string;
  label: string;
  /** `reload` fetches the node again (after a tab changed it). */
  render(node: NodeT, reload: () => void): ReactNode;
}

/** The node page: header with status actions, an Overview tab (edit + QR), and tabs the app adds. */
export function NodeDetail({ slug, tabs }: { slug: string; tabs: NodeTab[] }) {
  const node = useResource(() => api.nodes.get(slug), [slug]);
  // `?tab=scans` opens a tab directly (the organization's analytics links to a node's scans).
  const requested = useSearchParams().get('tab');
  const [tab, setTab] = useState(requested !== null && tabs.some((t) => t.id === requested) ? requested : 'overview');

  if (node.error) {
    return (
      <>
        <PageHeader title={slug} back={<Link to="/nodes">← Nodes</Link>} />
        <ErrorState error={node.error} onRetry={node.reload} title={node.error instanceof ApiError && node.error.status === 404 ? 'Node not found' : 'Could not load the node'} />
      </>
    );
  }
  if (!node.data) return <Loading label="Loading node…" />;
  const n = node.data;
  return (
    <>
      <PageHeader
        back={<Link to="/nodes">← Nodes</Link>}
        title={
          <span className="title-row">
            {n.label} <StatusBadge status={n.status} />
          </span>
        }
        description={
          <span className="scan-url">
            <code>{n.url}</code> <CopyButton text={n.url} label="Copy URL" />
          </span>
        }
        actions={<StatusActions node={n} onChanged={node.reload} />}
      />
      <Tabs
        label="Node sections"
        selected={tab}
        onSelect={setTab}
        tabs={[{ id: 'overview', label: 'Overview' }, ...tabs.map((t) => ({ id: t.id, label: t.label }))]}
      >
        {tab === 'overview' ? <Overview node={n} onSaved={node.reload} /> : tabs.find((t) => t.id === tab)?.render(n, node.reload)}
      </Tabs>
    </>
  );
}

function StatusActions({ node, onChanged }: { node: NodeT; onChanged(): void }) {
  const [confirm, setConfirm] = useState<null | 'delete' | 'retire' | 'lost'>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const run = async (name: string, action: () => Promise<unknown>, done: string) => {
    setBusy(name);
    try {
      await action();
      toast.success(done);
      onChanged();
    } catch (err) {
      toast.fromError(err);
    } finally {
      setBusy(null);
      setConfirm(null);
    }
  };
  const setStatus = (status: 'active' | 'paused' | 'retired', done: string) => run(status, () => api.nodes.update(node.slug, { status }), done);
  const s = node.status;

  return (
    <div className="button-row">
      {s === 'active' ? (
        <Button busy={busy === 'paused'} onClick={() => setStatus('paused', 'Node paused: scans get a "paused" page')}>
          Pause
        </Button>
      ) : null}
      {s === 'paused' ? (
        <Button variant="primary" busy={busy === 'active'} onClick={() => setStatus('active', 'Node resumed')}>
          Resume
        </Button>
      ) : null}
      {s === 'draft' || s === 'in_production' || s === 'retired' || s === 'lost' ? (
        <Button variant="primary" busy={busy === 'active'} onClick={() => setStatus('active', 'Node active')}>
          {s === 'lost' ? 'Mark found' : s === 'retired' ? 'Reactivate' : 'Activate'}
        </Button>
      ) : null}
      {s === 'active' || s === 'paused' ? <Button onClick={() => setConfirm('lost')}>Report lost</Button> : null}
      {s !== 'retired' ? <Button onClick={() => setConfirm('retire')}>Retire</Button> : null}
      <Button variant="danger" onClick={() => setConfirm('delete')}>
        Delete
      </Button>
      <ConfirmDialog
        open={confirm === 'lost'}
        title="Report this node lost?"
        message="The tag keeps working (scans are still served); the node is marked lost so the team knows to replace it."
        confirmLabel="Report lost"
        onClose={() => setConfirm(null)}
        onConfirm={() => run('lost', () => api.nodes.reportLost(node.slug), 'Node reported lost')}
      />
      <ConfirmDialog
        open={confirm === 'retire'}
        title="Retire this node?"
        message="Scans will get a 'retired' page. You can reactivate it later."
        confirmLabel="Retire"
        onClose={() => setConfirm(null)}
        onConfirm={() => setStatus('retired', 'Node retired')}
      />
      <ConfirmDialog
        open={confirm === 'delete'}
        title={`Delete ${node.label}?`}
        danger
        message={
          <>
            <p>
              The node, its routing rules and its analytics are deleted permanently. Its slug <code>{node.slug}</code> is never reused: printed codes
              will answer “gone”.
            </p>
          </>
        }
        confirmLabel="Delete node"
        onClose={() => setConfirm(null)}
        onConfirm={async () => {
          try {
            await api.nodes.remove(node.slug);
            toast.success(`Node ${node.slug} deleted`);
            navigate('/nodes');
          } catch (err) {
            toast.fromError(err);
            setConfirm(null);
          }
        }}
      />
    </div>
  );
}

function Overview({ node, onSaved }: { node: NodeT; onSaved(): void }) {
  const [label, setLabel] = useState(node.label);
  const [type, setType] = useState<FunctionType>(node.function_type);
  const [payload, setPayload] = useState<Record<string, unknown>>(node.payload);
  const { errors, setErrors, formRef, formError, setFormError, busy, send } = useFormSubmit({ refused: 'The server did not accept the change' });
  const typeChanged = type !== node.function_type;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setFormError(undefined);
    const next = cleanPayload(type, payload);
    const body: Record<string, unknown> = {};
    if (label !== node.label) body.label = label;
    if (typeChanged) {
      body.function_type = type;
      body.payload = next;
    } else {
      const patch = mergePatch(node.payload, next);
      if (Object.keys(patch).length > 0) body.payload = patch;
    }
    if (Object.keys(body).length === 0) {
      toast.info('Nothing to save');
      return;
    }
    const c1 = validate(UpdateNodeBody, body);
    const c2 = validate(payloadSchemas[type], next, 'payload');
    await send({ ...(c1.ok ? {} : c1.errors), ...(c2.ok ? {} : c2.errors) }, async () => {
      await api.nodes.update(node.slug, body);
      toast.success('Node saved');
      onSaved();
    });
  };

  return (
    <div className="detail-grid">
      <Card title="Configuration">
        <form ref={formRef} onSubmit={submit} noValidate aria-label="Edit node">
          <Field label="Label" required error={errors.label ? `Label ${errors.label}` : undefined}>
            {(c) => <input {...c} className="input" value={label} onChange={(e) => setLabel(e.target.value)} />}
          </Field>
          <Field
            label="Type"
            error={errors.function_type ? `Type: ${errors.function_type}` : undefined}
            hint={typeChanged ? 'Changing the type replaces the whole payload.' : node.template_id ? 'Bound to a template: the type cannot change.' : undefined}
          >
            {(c) => (
              <select
                {...c}
                className="input"
                value={type}
                disabled={Boolean(node.template_id)}
                onChange={(e) => {
                  const t = e.target.value as FunctionType;
                  setType(t);
                  setPayload(t === node.function_type ? node.payload : t === 'action' ? { action_type: 'whatsapp' } : {});
                  setErrors({});
                }}
              >
                {FUNCTION_TYPES.map((t) => (
                  <option key={t} value={t}>
                    {typeLabel(t)}
                  </option>
                ))}
              </select>
            )}
          </Field>
          {Object.keys(node.payload).length === 0 && !typeChanged ? <Notice kind="warning">This node is not configured yet: scans get a “not active yet” page.</Notice> : null}
          <PayloadForm type={type} value={payload} onChange={setPayload} errors={scoped(errors, 'payload')} />
          {formError ? <Notice kind="error">{formError}</Notice> : null}
          <FormActions submitLabel="Save changes" busy={busy} />
        </form>
      </Card>
      <div className="stack">
        <NodeLimits key={node.updated_at} node={node} onSaved={onSaved} />
        <Card title="QR code">
          <QrPreview slug={node.slug} url={node.url} />
        </Card>
        <Card title="Details">
          <dl className="facts">
            <dt>Slug</dt>
            <dd className="mono">{node.slug}</dd>
            <dt>Scans</dt>
            <dd>{formatNumber(node.scan_count)}</dd>
            <dt>Serial</dt>
            <dd className="mono">{node.serial ?? '—'}</dd>
            <dt>Batch</dt>
            <dd>{node.batch_id ? <Link to={`/batches/${node.batch_id}`}>Open batch</Link> : '—'}</dd>
            <dt>NFC chip UID</dt>
            <dd className="mono">{node.hardware_id ?? 'No tag written'}</dd>
            <dt>Created</dt>
            <dd>{formatDate(node.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{formatDate(node.updated_at)}</dd>
          </dl>
        </Card>
      </div>
    </div>
  );
}
