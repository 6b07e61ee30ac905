import { useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { ConfirmAction } from '../../components/Dialog.tsx';
import { Card } from '../../components/PageHeader.tsx';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { summarizePayload } from '../../components/payload/fields.ts';
import { api, type RuleT } from '../../lib/api.ts';
import { typeLabel } from '../../lib/format.ts';
import { toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';
import { RULE_TYPE_LABELS, describeConditions } from './conditions.ts';
import { RuleForm, type RuleDraft } from './RuleForm.tsx';

/** A node's routing rules: tried in priority order at scan time; the first match serves. */
export function RulesEditor({ slug }: { slug: string }) {
  const rules = useResource(() => api.rules.list(slug), [slug]);
  const [editing, setEditing] = useState<RuleT | 'new' | null>(null);
  const [deleting, setDeleting] = useState<RuleT | null>(null);
  const list = [...(rules.data?.data ?? [])].sort((a, b) => a.priority - b.priority || a.created_at.localeCompare(b.created_at));
  const splitSum = (except?: string) => list.filter((r) => r.rule_type === 'traffic_split' && r.id !== except).reduce((s, r) => s + Number(r.conditions.weight ?? 0), 0);

  const save = async (draft: RuleDraft) => {
    if (editing && editing !== 'new') {
      await api.rules.update(slug, editing.id, { conditions: draft.conditions, function_type: draft.function_type, payload: draft.payload, priority: draft.priority, enabled: draft.enabled });
      toast.success('Rule saved');
    } else {
      await api.rules.create(slug, draft);
      toast.success(`${RULE_TYPE_LABELS[draft.rule_type]} rule added`);
    }
    setEditing(null);
    rules.reload();
  };

  // Optimistic: the switch flips at once and flips back if the server refuses.
  const toggle = async (rule: RuleT) => {
    const page = rules.data;
    if (!page) return;
    const replace = (r: RuleT) => rules.set({ ...page, data: page.data.map((x) => (x.id === r.id ? r : x)) });
    replace({ ...rule, enabled: !rule.enabled });
    try {
      replace(await api.rules.update(slug, rule.id, { enabled: !rule.enabled }));
    } catch (err) {
      replace(rule);
      toast.fromError(err);
    }
  };

  return (
    <div className="stack">
      <Card
        title="Routing rules"
        actions={
          editing ? null : (
            <Button variant="primary" onClick={() => setEditing('new')}>
              Add rule
            </Button>
          )
        }
      >
        <p className="muted">Rules are tried in priority order (lower first); the first that matches serves its own content. When none matches, the node’s own payload is served.</p>
        {rules.error ? (
          <ErrorState error={rules.error} onRetry={rules.reload} title="Could not load rules" />
        ) : !rules.data ? (
          <Loading label="Loading rules…" />
        ) : list.length === 0 ? (
          <Empty title="No rules">Every scan gets the node’s own payload.</Empty>
        ) : (
          <ol className="rule-list">
            {list.map((r) => (
              <li key={r.id} className={`rule${r.enabled ? '' : ' rule-disabled'}`}>
                <div className="rule-main">
                  <span className="rule-kind">{RULE_TYPE_LABELS[r.rule_type]}</span>
                  <span className="rule-when">{describeConditions(r.rule_type, r.conditions)}</span>
                  <span className="rule-serves">
                    → {typeLabel(r.function_type)}: {summarizePayload(r.function_type, r.payload) || '—'}
                  </span>
                </div>
                <div className="rule-meta">
                  <span className="muted">Priority {r.priority}</span>
                  <label className="switch">
                    <input type="checkbox" checked={r.enabled} onChange={() => toggle(r)} aria-label={`Rule ${RULE_TYPE_LABELS[r.rule_type]} enabled`} />
                    <span>{r.enabled ? 'On' : 'Off'}</span>
                  </label>
                  <Button size="sm" onClick={() => setEditing(r)}>
                    Edit
                  </Button>
                  <Button size="sm" variant="ghost" onClick={() => setDeleting(r)}>
                    Delete
                  </Button>
                </div>
              </li>
            ))}
          </ol>
        )}
      </Card>
      {editing ? (
        <Card title={editing === 'new' ? 'New rule' : `Edit ${RULE_TYPE_LABELS[editing.rule_type].toLowerCase()} rule`}>
          <RuleForm
            key={editing === 'new' ? 'new' : editing.id}
            initial={editing === 'new' ? undefined : editing}
            otherSplitWeight={splitSum(editing === 'new' ? undefined : editing.id)}
            onSubmit={save}
            onCancel={() => setEditing(null)}
          />
        </Card>
      ) : null}
      <ConfirmAction
        target={deleting}
        title={() => 'Delete this rule?'}
        message={(r) => `${RULE_TYPE_LABELS[r.rule_type]}: ${describeConditions(r.rule_type, r.conditions)}`}
        confirmLabel="Delete rule"
        danger
        action={(r) => api.rules.remove(slug, r.id)}
        success={() => 'Rule deleted'}
        onDone={() => rules.reload()}
        onClose={() => setDeleting(null)}
      />
    </div>
  );
}
