import { type FormEvent, useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { Notice } from '../../components/States.tsx';
import { ApiError, api } from '../../lib/api.ts';
import { useSession } from '../../lib/session.ts';
import { errorMessage } from '../../lib/toast.ts';

/**
 * Sign-in with an API key. The key is checked against the server (GET /v1/instance) before it
 * is kept, for this browser session only.
 */
export function SignIn() {
  const notice = useSession((s) => s.notice);
  const signIn = useSession((s) => s.signIn);
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const trimmed = key.trim();
    if (!/^wmk_[A-Za-z0-9]{8,}$/.test(trimmed)) {
      setError('API key must look like wmk_ followed by letters and digits');
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await api.checkKey(trimmed);
      signIn(trimmed);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? 'This key was not accepted: it is mistyped or revoked.' : errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="signin">
      <div className="signin-card">
        <div className="brand brand-large">
          <span className="brand-mark" aria-hidden="true" />
          <span>Waymark</span>
        </div>
        <h1>Sign in to the console</h1>
        <p className="muted">
          Use an API key of your organization. <code>waymark serve</code> prints a console link carrying the first key; other keys are created
          under API keys.
        </p>
        {notice ? <Notice kind="warning">{notice}</Notice> : null}
        <form onSubmit={submit} noValidate>
          <Field label="API key" error={error} hint="Kept for this browser tab only (session storage); closing the tab signs you out.">
            {(control) => (
              <input
                {...control}
                className="input mono"
                type="password"
                name="api-key"
                autoComplete="off"
                spellCheck={false}
                autoFocus
                value={key}
                placeholder="wmk_…"
                onChange={(e) => setKey(e.target.value)}
              />
            )}
          </Field>
          <Button type="submit" variant="primary" busy={busy} className="btn-block">
            Sign in
          </Button>
        </form>
      </div>
    </main>
  );
}
