import { useState } from 'preact/hooks';
import { type ConnectedApp, type PersonalToken, SCOPES, SCOPE_WORDS, people } from '../api.people.js';
import { useMe } from '../session.context.js';
import { dateTimeIn } from '../time.js';
import { Copyable, Loading, Notice, Section, useAction, useLoad } from '../ui.js';
import { TOKEN_NAME_MAX } from '../rules.js';

type Listed = { id: number; label: string; scopes: string[] | null; last_used_at: string | null };

const fromToken = (t: PersonalToken): Listed => ({ ...t, label: t.name ?? `token ${t.id}${t.kind === 'cli' ? ' (from the command line)' : ''}` });
const fromApp = (a: ConnectedApp): Listed => ({ ...a, label: a.client_id });

function TokenList({ tokens, busy, revoke, empty }: { tokens: Listed[]; busy: boolean; revoke: (id: number) => void; empty: string }) {
  const zone = useMe().timezone;
  if (tokens.length === 0) return <p class="empty">{empty}</p>;
  return (
    <ul class="list">
      {tokens.map((token) => {
        const name = token.label;
        return (
          <li key={token.id}>
            <span>
              <strong>{name}</strong>
              <span class="meta">
                {' '}
                {(token.scopes ?? []).join(' ') || 'all rights'} · last used {token.last_used_at ? dateTimeIn(token.last_used_at, zone) : 'never'}
              </span>
            </span>
            <button type="button" class="link" disabled={busy} aria-label={`Revoke ${name}`} onClick={() => revoke(token.id)}>
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
  const apps = useLoad(() => people.apps(), 'apps');
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(new Set(['sessions:read', 'me:read']));
  const [shown, setShown] = useState<string | null>(null);
  const { busy, message, run, invalid } = useAction();
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
  const revoke = (id: number) =>
    void run(async () => {
      await people.revokeToken(id);
      await tokens.reload();
      return 'Revoked.';
    });
  const disconnect = (id: number) =>
    void run(async () => {
      await people.revokeApp(id);
      await apps.reload();
      return 'Disconnected: the app can no longer act for you.';
    });
  return (
    <>
      <Section title="Personal tokens">
        <Loading error={tokens.error} loading={tokens.loading && !tokens.data} />
        {tokens.data && <TokenList tokens={tokens.data.map(fromToken)} busy={busy} revoke={revoke} empty="No personal tokens." />}
        {shown && <Copyable label="New token" value={shown} />}
        <form class="stack" onSubmit={issue}>
          <label for="token-name">Token name</label>
          <input id="token-name" required aria-invalid={invalid('name')} maxLength={TOKEN_NAME_MAX} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <fieldset>
            <legend>Scopes</legend>
            <div class="checks">
              {SCOPES.map((scope) => (
                <label key={scope} class="check">
                  <input type="checkbox" checked={scopes.has(scope)} onChange={(e) => setScopes((s) => (e.currentTarget.checked ? new Set([...s, scope]) : new Set([...s].filter((x) => x !== scope))))} />{' '}
                  <span>
                    <code>{scope}</code>: {SCOPE_WORDS[scope]}
                  </span>
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
        <Loading error={apps.error} loading={apps.loading && !apps.data} />
        {apps.data && <TokenList tokens={apps.data.map(fromApp)} busy={busy} revoke={disconnect} empty="No connected apps." />}
      </Section>
    </>
  );
}
