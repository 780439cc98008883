import { useState } from 'preact/hooks';
import { people, singleSignOnStart } from '../api.people.js';
import { navigate } from '../router.js';
import { HANDLE_INPUT_PATTERN, PASSWORD_MAX, PASSWORD_MIN } from '../rules.js';
import { useSigned } from '../session.context.js';
import { dateTimeIn } from '../time.js';
import { Notice, useAction, useLoad } from '../ui.js';

/**
 * An invitation link: a new person chooses a handle and a password; someone already signed in just joins the org.
 */
export function Invite({ secret }: { secret: string }) {
  const { me, refresh } = useSigned();
  const [handle, setHandle] = useState('');
  const [password, setPassword] = useState('');
  const { busy, message, run, invalid } = useAction();
  const preview = useLoad(() => people.previewInvite(secret), `invite ${secret}`);
  const sso = useLoad(() => people.singleSignOn(), 'sso');
  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      if (me) {
        await people.acceptInvite(secret, {});
      } else {
        const chosen = handle.trim().toLowerCase();
        await people.acceptInvite(secret, { handle: chosen, password });
        // Accepting may or may not sign the person in; signing in here makes both cases the same.
        if ((await refresh()) === null) await people.login(chosen, password);
      }
      await refresh();
      navigate('/week', true);
    });
  };
  return (
    <div class="narrow">
      <h1 tabIndex={-1}>Join a team on Focus</h1>
      {preview.data && (
        <p>
          You are invited to team {preview.data.org_id}. The invitation expires {dateTimeIn(preview.data.expires_at)}.
        </p>
      )}
      {preview.error && (
        <p role="alert" class="notice error">
          This invitation cannot be used: it is unknown, used, revoked or expired. Ask for a new link.
        </p>
      )}
      {/* An unusable link offers nothing to fill in: the only way on is a new link. */}
      {!preview.error && (
        <form onSubmit={submit} class="stack">
          {me ? (
            <p>You are signed in as {me.handle}: accepting adds this team to your account.</p>
          ) : (
            <>
              <p>Choose the handle others will see and a password of at least {PASSWORD_MIN} characters.</p>
              <label for="handle">Handle</label>
              <input id="handle" autoComplete="username" autoCapitalize="none" spellcheck={false} required pattern={HANDLE_INPUT_PATTERN} aria-invalid={invalid('handle')} aria-describedby="handle-rule" value={handle} onInput={(e) => setHandle(e.currentTarget.value)} />
              <p id="handle-rule" class="hint">
                1 to 64 characters: lowercase letters, digits, dot, underscore or hyphen.
              </p>
              <label for="password">Password</label>
              <input id="password" type="password" autoComplete="new-password" required aria-invalid={invalid('password')} minLength={PASSWORD_MIN} maxLength={PASSWORD_MAX} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
            </>
          )}
          <button type="submit" disabled={busy}>
            Accept invitation
          </button>
          <Notice message={message} />
        </form>
      )}
      {!me && !preview.error && sso.data === true && (
        <p>
          Or{' '}
          <a href={singleSignOnStart(secret)} data-external>
            accept with single sign-on
          </a>{' '}
          (your handle comes from your email address).
        </p>
      )}
    </div>
  );
}
