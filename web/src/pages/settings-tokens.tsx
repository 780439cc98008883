import { useState } from 'preact/hooks';
import { type PersonalToken, SCOPES, people } from '../api.people.js';
import { Copyable, Loading, Notice, Section, useAction, useLoad } from '../ui.js';

const when = (instant: string | null) => (instant ? new Date(instant).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short' }) : 'never');

/** A token an app got through the device grant carries the app's name (`client_id`). */
const isApp = (token: PersonalToken) => typeof token.client_id === 'string' && token.client_id !== '';

function TokenList({ tokens, busy, revoke, empty }: { tokens: PersonalToken[]; busy: boolean; revoke: (t: PersonalToken) => void; empty: string }) {
  if (tokens.length === 0) return <p class="empty">{empty}</p>;
  return (
    <ul class="list">
      {tokens.map((token) => {
        const name = (isApp(token) ? token.client_id : token.name) ?? `token ${token.id}`;
        return (
          <li key={token.id}>
            <span>
              <strong>{name}</strong>
              <span class="meta">
                {' '}
                {(token.scopes ?? []).join(' ') || 'all rights'} · last used {when(token.last_used_at)}
              </span>
            </span>
            <button type="button" class="link" disabled={busy} aria-label={`Revoke ${name}`} onClick={() => revoke(token)}>
              Revoke
            </button>
          </li>
        );
      })}
    </ul>
  );
}

export function Tokens() {
  const tokens = useLoad(() => people.tokens(), 'tokens');
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(new Set(['sessions:read', 'me:read']));
  const [shown, setShown] = useState<string | null>(null);
  const { busy, message, run } = useAction();
  const issue = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      const token = await people.issueToken({ name: name.trim(), scopes: SCOPES.filter((s) => scopes.has(s)) });
      setShown(token.token ?? null);
      setName('');
      await tokens.reload();
      return 'Token created: copy it now, it is shown only once.';
    });
  };
  const revoke = (token: PersonalToken) =>
    void run(async () => {
      await people.revokeToken(token.id);
      await tokens.reload();
      return 'Revoked.';
    });
  const all = tokens.data ?? [];
  return (
    <>
      <Section title="Personal tokens">
        <Loading error={tokens.error} loading={tokens.loading && !tokens.data} />
        {tokens.data && <TokenList tokens={all.filter((t) => !isApp(t))} busy={busy} revoke={revoke} empty="No personal tokens." />}
        {shown && <Copyable label="New token" value={shown} />}
        <form class="stack" onSubmit={issue}>
          <label for="token-name">Token name</label>
          <input id="token-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <fieldset>
            <legend>Scopes</legend>
            <div class="checks">
              {SCOPES.map((scope) => (
                <label key={scope} class="check">
                  <input type="checkbox" checked={scopes.has(scope)} onChange={(e) => setScopes((s) => (e.currentTarget.checked ? new Set([...s, scope]) : new Set([...s].filter((x) => x !== scope))))} /> {scope}
                </label>
              ))}
            </div>
          </fieldset>
          <button type="submit" disabled={busy}>
            Create token
          </button>
        </form>
        <Notice message={message} />
      </Section>
      <Section title="Connected apps">
        <p class="hint">Apps you approved with a code on the Connect an app page.</p>
        {tokens.data && <TokenList tokens={all.filter(isApp)} busy={busy} revoke={revoke} empty="No connected apps." />}
      </Section>
    </>
  );
}
