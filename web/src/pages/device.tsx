import { useState } from 'preact/hooks';
import { people } from '../api.people.js';
import { Notice, useAction } from '../ui.js';

/** RFC 8628's verification page: the code an app shows, approved or denied by the signed-in person. */
export function Device() {
  const [code, setCode] = useState(() => new URL(window.location.href).searchParams.get('user_code') ?? '');
  const { busy, message, run } = useAction();
  const normalized = () => code.toUpperCase().replace(/[^A-Z0-9]/g, '');
  return (
    <div class="narrow">
      <h1 tabIndex={-1}>Connect an app</h1>
      <p>An app that asks to act for you shows a code. Check that it is the same code, then approve or deny.</p>
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        <label for="user-code">Code</label>
        <input id="user-code" autoComplete="off" autoCapitalize="characters" spellcheck={false} required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
        <div class="row">
          <button type="button" disabled={busy} onClick={() => void run(async () => (await people.approveDevice(normalized()), 'Approved: the app is now connected. You can close this page.'))}>
            Approve
          </button>
          <button type="button" class="secondary" disabled={busy} onClick={() => void run(async () => (await people.denyDevice(normalized()), 'Denied: the app was not connected.'))}>
            Deny
          </button>
        </div>
        <Notice message={message} />
      </form>
    </div>
  );
}
