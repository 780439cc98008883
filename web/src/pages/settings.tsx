import { useState } from 'preact/hooks';
import { api, must } from '../api.js';
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

export function Settings() {
  return (
    <>
      <h1 tabIndex={-1}>Settings</h1>
      <Profile />
      <Feeds />
      <Webhooks />
      <Tokens />
      <Admin />
    </>
  );
}
