import { useCallback, useState } from 'react';
import { ApiError } from './api.ts';
import { errorMessage } from './toast.ts';
import { useFormErrors } from './useFormErrors.ts';
import type { FieldErrors } from './validation.ts';

/**
 * A form's submit cycle, the same in every editing form: the client's field errors first (any, and
 * nothing is sent), then the request with the button busy; a 422 puts the server's details on the
 * fields, anything else becomes the form's message. `refused` starts the 422 message ("The server
 * did not accept the change").
 */
export function useFormSubmit(options: { refused: string; focusFirst?: boolean }) {
  const { errors, setErrors, formRef } = useFormErrors(options.focusFirst === undefined ? {} : { focusFirst: options.focusFirst });
  const [formError, setFormError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const { refused } = options;
  const send = useCallback(
    async (clientErrors: FieldErrors, request: () => Promise<void>) => {
      setFormError(undefined);
      setErrors(clientErrors);
      if (Object.keys(clientErrors).length > 0) {
        setFormError('Some fields need attention.');
        return;
      }
      setBusy(true);
      try {
        await request();
      } catch (err) {
        if (err instanceof ApiError && err.status === 422) {
          setErrors(err.details);
          setFormError(`${refused}: ${err.message}.`);
        } else setFormError(errorMessage(err));
      } finally {
        setBusy(false);
      }
    },
    [refused, setErrors],
  );
  return { errors, setErrors, formRef, formError, setFormError, busy, send };
}
