import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { people } from '../api.people.js';
import { navigate } from '../router.js';
import { useSigned } from '../session.context.js';
import { Notice, useAction } from '../ui.js';

/** Only app paths are followed after signing in, never another site. */
export function nextPath(): string {
  const next = new URL(window.location.href).searchParams.get('next') ?? '/week';
  return next.startsWith('/') && !next.startsWith('//') ? next : '/week';
}

export function SignIn() {
  const { me, refresh } = useSigned();
  const [handle, setHandle] = useState('');
  const [password, setPassword] = useState('');
  const { busy, message, run } = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      try {
        await people.login(handle.trim().toLowerCase(), password);
      } catch (error) {
        // One generic answer whatever was wrong, as the server gives.
        if (error instanceof ApiError && error.status === 401) throw new Error('Sign-in failed: check the handle and the password.', { cause: error });
        throw error;
      }
      await refresh();
      navigate(nextPath(), true);
    });
  };
  return (
    <div class="narrow">
      <h1 tabIndex={-1}>Sign in to Focus</h1>
      {me && <p>You are signed in as {me.handle}.</p>}
      <form onSubmit={submit} class="stack">
        <label for="handle">Handle</label>
        <input id="handle" name="username" autoComplete="username" autoCapitalize="none" spellcheck={false} required value={handle} onInput={(e) => setHandle(e.currentTarget.value)} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autoComplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <Notice message={message} />
      </form>
      <p class="hint">No account yet? Ask an admin of your team for an invitation link.</p>
    </div>
  );
}
