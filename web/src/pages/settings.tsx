import { useState } from 'preact/hooks';
import { api, must } from '../api.js';
import { people } from '../api.people.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../rules.js';
import { useMe, useSigned } from '../session.context.js';
import { timeZones } from '../time.js';
import { Notice, Section, useAction } from '../ui.js';
import { Admin } from './settings-admin.js';
import { Feeds, Webhooks } from './settings-integrations.js';
import { Tokens } from './settings-tokens.js';

/** Reminders as the person types them: minutes before a session, comma separated. */
function parseReminders(text: string): number[] {
  return text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
}

function Profile() {
  const me = useMe();
  const { refresh } = useSigned();
  const [zone, setZone] = useState(me.timezone);
  const [reminders, setReminders] = useState(me.reminders.join(', '));
  const { busy, message, run } = useAction();
  const zones = timeZones(me.timezone);
  const save = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      must(await api.PUT('/api/v1/me', { body: { timezone: zone, reminders: parseReminders(reminders) } }));
      await refresh();
      return 'Saved.';
    });
  };
  return (
    <Section title="You">
      <p>
        Signed in as <strong>{me.handle}</strong>, in team{me.org_ids.length === 1 ? '' : 's'} {me.org_ids.join(', ')}.
      </p>
      <form class="stack" onSubmit={save}>
        <label for="zone">Home time zone</label>
        <select id="zone" value={zone} onChange={(e) => setZone(e.currentTarget.value)}>
          {zones.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
        <label for="reminders">Reminders, in minutes before a session</label>
        <input id="reminders" inputMode="numeric" aria-describedby="reminders-hint" value={reminders} onInput={(e) => setReminders(e.currentTarget.value)} />
        <p id="reminders-hint" class="hint">
          Up to 5 numbers from 0 to 10080, separated by commas; empty for none.
        </p>
        <button type="submit" disabled={busy}>
          Save
        </button>
        <Notice message={message} />
      </form>
    </Section>
  );
}

/** Contract section 12 is silent on it; docs/api.md: the current password, and other browsers are signed out. */
function Password() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const { busy, message, run, invalid } = useAction();
  const save = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      await people.changePassword({ current_password: current, new_password: next });
      setCurrent('');
      setNext('');
      return 'Password changed. Other browsers you were signed in on are signed out.';
    });
  };
  return (
    <Section title="Password">
      <form class="stack" onSubmit={save}>
        <label for="current-password">Current password</label>
        <input id="current-password" type="password" autoComplete="current-password" required aria-invalid={invalid('current_password')} value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
        <label for="new-password">New password</label>
        <input id="new-password" type="password" autoComplete="new-password" required aria-invalid={invalid('new_password')} minLength={PASSWORD_MIN} maxLength={PASSWORD_MAX} aria-describedby="new-password-hint" value={next} onInput={(e) => setNext(e.currentTarget.value)} />
        <p id="new-password-hint" class="hint">
          At least {PASSWORD_MIN} characters.
        </p>
        <button type="submit" disabled={busy}>
          Change password
        </button>
        <Notice message={message} />
      </form>
    </Section>
  );
}

export function Settings() {
  return (
    <>
      <h1 tabIndex={-1}>Settings</h1>
      <Profile />
      <Password />
      <Feeds />
      <Webhooks />
      <Tokens />
      <Admin />
    </>
  );
}
