// Sign-in: an API key exchanged for a session cookie (POST /dashboard/session). The key is sent once
// and never kept by the page.
import { useState } from 'preact/hooks';
import { signIn, type Session } from '../api.js';
import { ErrorNotice, Field } from '../components/ui.js';

export function SignIn({ notice, onSignedIn }: { notice: string; onSignedIn: (session: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <main class="sign-in" id="main">
      <h1>modelgate</h1>
      <p>Sign in with an API key. An admin key manages the gateway; any other key sees its own usage.</p>
      {notice && <p class="notice" role="status">{notice}</p>}
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setBusy(true);
          setError(null);
          try {
            const session = await signIn(key.trim());
            setKey('');
            onSignedIn(session);
          } catch (caught) {
            setError(caught);
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field label="API key">
          <input name="key" type="password" autoComplete="off" required value={key} onInput={(event) => setKey(event.currentTarget.value)} placeholder="uc_…" />
        </Field>
        <ErrorNotice error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
