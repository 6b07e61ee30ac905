import { useCallback, useEffect, useRef, useState } from 'react';
import type { FieldErrors } from './validation.ts';

const CONTROLS = 'input:not([type="hidden"]):not([disabled]), select:not([disabled]), textarea:not([disabled])';

/** The first field marked invalid (Field sets aria-invalid; a FieldSet marks its group), in page order. */
function firstInvalid(form: HTMLElement): HTMLElement | null {
  return form.querySelector<HTMLElement>(`[aria-invalid="true"], .field-invalid :is(${CONTROLS})`);
}

/**
 * A form's field errors, with the focus where a keyboard or screen reader user needs it: every
 * time errors are set (a submit the browser or the server refused), on the first invalid field
 * instead of the submit button; with `focusFirst`, on the form's first field when it appears
 * (an inline form opened by a button that disappears, which would drop the focus to <body>).
 */
export function useFormErrors(options: { focusFirst?: boolean } = {}) {
  const formRef = useRef<HTMLFormElement>(null);
  const [state, setState] = useState<{ errors: FieldErrors; refusals: number }>({ errors: {}, refusals: 0 });
  const setErrors = useCallback(
    (errors: FieldErrors) => setState((s) => ({ errors, refusals: Object.keys(errors).length > 0 ? s.refusals + 1 : s.refusals })),
    [],
  );
  const focusFirst = options.focusFirst === true;
  useEffect(() => {
    if (focusFirst) formRef.current?.querySelector<HTMLElement>(CONTROLS)?.focus();
  }, [focusFirst]);
  useEffect(() => {
    if (state.refusals === 0 || !formRef.current) return;
    const field = firstInvalid(formRef.current);
    field?.focus();
    field?.scrollIntoView?.({ block: 'center' });
  }, [state.refusals]);
  return { errors: state.errors, setErrors, formRef };
}
