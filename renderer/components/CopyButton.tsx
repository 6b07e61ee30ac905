import { useState } from 'react';
import { copyText } from '../lib/download.ts';
import { Button } from './Button.tsx';

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <Button
      size="sm"
      onClick={async () => {
        setState((await copyText(text)) ? 'copied' : 'failed');
        window.setTimeout(() => setState('idle'), 2000);
      }}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select and copy' : label}
    </Button>
  );
}

/** A secret shown once: monospace, selectable, with a copy button and a warning. */
export function SecretBox({ label, value, warning }: { label: string; value: string; warning: string }) {
  return (
    <div className="secret">
      <p className="secret-label">{label}</p>
      <div className="secret-row">
        <code className="secret-value" data-testid="secret-value">
          {value}
        </code>
        <CopyButton text={value} />
      </div>
      <p className="secret-warning">{warning}</p>
    </div>
  );
}
