import { type ReactNode, useId } from 'react';

export interface FieldControlProps {
  id: string;
  'aria-invalid': boolean | undefined;
  'aria-describedby': string | undefined;
  'aria-required': boolean | undefined;
}

export interface FieldProps {
  label: ReactNode;
  error?: string | undefined;
  hint?: ReactNode;
  required?: boolean;
  className?: string;
  children: (control: FieldControlProps) => ReactNode;
}

/** A labelled control with its hint and error wired through aria-describedby / aria-invalid. */
export function Field({ label, error, hint, required, className, children }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={['field', error ? 'field-invalid' : '', className ?? ''].filter(Boolean).join(' ')}>
      <div className="field-label-row">
        <label htmlFor={id} className="field-label">
          {label}
        </label>
        {required ? (
          <span className="field-required" aria-hidden="true">
            *
          </span>
        ) : null}
      </div>
      {children({ id, 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy, 'aria-required': required || undefined })}
      {hint ? (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={errorId} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** A group of checkboxes/radios with a legend. */
export function FieldSet({ legend, error, hint, children, className }: { legend: ReactNode; error?: string | undefined; hint?: ReactNode; children: ReactNode; className?: string }) {
  const id = useId();
  return (
    <fieldset className={['fieldset', error ? 'field-invalid' : '', className ?? ''].filter(Boolean).join(' ')} aria-describedby={error ? `${id}-error` : undefined}>
      <legend className="field-label">{legend}</legend>
      {hint ? <p className="field-hint">{hint}</p> : null}
      {children}
      {error ? (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
