import type { ButtonHTMLAttributes, ReactNode, Ref } from 'react';

export interface ButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  variant?: 'primary' | 'secondary' | 'danger' | 'ghost';
  size?: 'md' | 'sm';
  busy?: boolean;
  icon?: ReactNode;
  ref?: Ref<HTMLButtonElement>;
}

export function Button({ variant = 'secondary', size = 'md', busy = false, icon, className, children, disabled, type, ...rest }: ButtonProps) {
  return (
    <button
      type={type ?? 'button'}
      className={['btn', `btn-${variant}`, size === 'sm' ? 'btn-sm' : '', className ?? ''].filter(Boolean).join(' ')}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {busy ? <span className="spinner spinner-inline" aria-hidden="true" /> : icon}
      <span>{children}</span>
    </button>
  );
}

/** The row under a form: Cancel (when there is somewhere to go back to) and the submit button. */
export function FormActions({ submitLabel, busy, disabled, onCancel }: { submitLabel: string; busy: boolean; disabled?: boolean; onCancel?(): void }) {
  return (
    <div className="form-actions">
      {onCancel ? <Button onClick={onCancel}>Cancel</Button> : null}
      <Button type="submit" variant="primary" busy={busy} {...(disabled === undefined ? {} : { disabled })}>
        {submitLabel}
      </Button>
    </div>
  );
}
