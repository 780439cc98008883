import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import { people, singleSignOnStart } from '../api.people.js';
import { navigate } from '../router.js';
import { useSigned } from '../session.context.js';
import { Notice, useAction, useLoad } from '../ui.js';

/**
 * Only app paths are followed after signing in, never another site (`//host`, or `/\host`, which
 * browsers read alike); with the fragment the page that sent here carried (an invitation's secret).
 */
export function nextPath(): string {
  const next = new URL(window.location.href).searchParams.get('next') ?? '/week';
  const url = new URL(next, window.location.origin);
  return next.startsWith('/') && url.origin === window.location.origin ? url.pathname + url.search + window.location.hash : '/week';
}

export function SignIn() {
  const { me, refresh } = useSigned();
  const [handle, setHandle] = useState('');
  const [password, setPassword] = useState('');
  const { busy, message, run } = useAction();
  const sso = useLoad(() => people.singleSignOn(), 'sso');
  const params = new URL(window.location.href).searchParams;
  const ssoFailed = params.get('error') === 'sso';
  const ended = params.get('ended') === '1';
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
      {ended && !me && (
        <p role="status" class="notice info">
          Your session has ended (signed out elsewhere, or the password changed). Sign in again to go on where you were.
        </p>
      )}
      {ssoFailed && (
        <p role="alert" class="notice error">
          Single sign-on did not sign you in: your account may not be set up for it. Ask an admin of your team.
        </p>
      )}
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
      {sso.data === true && (
        <p>
          <a href={singleSignOnStart()} data-external>
            Sign in with single sign-on
          </a>
        </p>
      )}
      <p class="hint">No account yet? Ask an admin of your team for an invitation link. Forgot your password? Whoever runs Focus can set a new one for you.</p>
    </div>
  );
}
