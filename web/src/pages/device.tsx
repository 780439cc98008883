import { useState } from 'preact/hooks';
import { people, scopeWords } from '../api.people.js';
import { Notice, useAction, useLoad } from '../ui.js';

/** User codes are 8 letters and digits (shown XXXX-XXXX); a shorter one is still being typed. */
const CODE_LENGTH = 8;

/**
 * RFC 8628's verification page: the signed-in person sees which app asks and for what
 * (GET /device) before approving or denying the code it shows.
 */
export function Device() {
  const [code, setCode] = useState(() => new URL(window.location.href).searchParams.get('user_code') ?? '');
  const { busy, message, run } = useAction();
  const normalized = code.toUpperCase().replace(/[^A-Z0-9]/g, '');
  const complete = normalized.length === CODE_LENGTH;
  const request = useLoad(async () => (complete ? await people.deviceRequest(normalized) : null), `device ${normalized}`);
  const asked = complete && !request.loading ? request.data : undefined;
  return (
    <div class="narrow">
      <h1 tabIndex={-1}>Connect an app</h1>
      <p>An app that asks to act for you shows a code. Check that it is the same code, then approve or deny.</p>
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        <label for="user-code">Code</label>
        <input id="user-code" autoComplete="off" autoCapitalize="characters" spellcheck={false} required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
        {asked && (
          <div aria-live="polite">
            <p>
              <strong>{asked.client_id}</strong> asks to:
            </p>
            <ul>
              {asked.scopes.map((scope) => (
                <li key={scope}>
                  {scopeWords(scope) ?? scope} (<code>{scope}</code>)
                </li>
              ))}
            </ul>
          </div>
        )}
        {complete && request.error && (
          <p role="alert" class="notice error">
            No app is waiting with this code: check it, or it has expired, been approved or been denied.
          </p>
        )}
        <div class="row">
          <button type="button" disabled={busy || !asked} onClick={() => void run(async () => (await people.approveDevice(normalized), 'Approved: the app is now connected. You can close this page.'))}>
            Approve
          </button>
          <button type="button" class="secondary" disabled={busy || !asked} onClick={() => void run(async () => (await people.denyDevice(normalized), 'Denied: the app was not connected.'))}>
            Deny
          </button>
        </div>
        <Notice message={message} />
      </form>
    </div>
  );
}
