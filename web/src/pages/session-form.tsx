import type { Schemas, Session } from '../api.js';
import { newSessionStart, timeZones, to12h, to24h } from '../time.js';
import { FocusFields, type FocusValues, focusBody, focusValues } from './session-focus.js';
import { SESSION_NAME_MAX } from '../rules.js';

export type Repeat = 'none' | 'daily' | 'weekly' | 'monthly';

/** What the session form edits, as the inputs hold it. */
export interface FormValues {
  org_id: number;
  name: string;
  date: string;
  time: string;
  duration: number;
  type: 'drop-in' | 'standard';
  is_public: boolean;
  repeat: Repeat;
  until: string;
  /** The zone `date` and `time` are in: the session's own (contract section 6). */
  timezone: string;
  focus: FocusValues;
}

/** The form for `session`, or for a new one in `home`, the person's home zone. */
export function initialValues(session: Session | null, date: string, orgs: number[], home: string): FormValues {
  if (!session) return { org_id: orgs[0] ?? 1, name: '', ...newSessionStart(date, home), duration: 50, type: 'standard', is_public: false, repeat: 'none', until: '', timezone: home, focus: focusValues(null) };
  return {
    org_id: session.org_id,
    name: session.name,
    date,
    time: to24h(session.time),
    duration: session.duration,
    type: session.type,
    is_public: session.is_public,
    repeat: session.is_recurring ? (session.occurrence ?? 'weekly') : 'none',
    until: session.recurring_ends ?? '',
    timezone: session.timezone,
    focus: focusValues(session),
  };
}

/** The recurrence fields of the API for the form's "Repeats" choice, starting on `start`. */
export function recurrenceBody(values: FormValues, start: string) {
  if (values.repeat === 'none') return { is_recurring: 0 as const };
  return {
    is_recurring: 1 as const,
    occurrence: values.repeat,
    recurring_start: start,
    recurring_ends: values.until === '' ? null : values.until,
    ...(values.repeat === 'monthly' ? { recurring_month_option: 'exact' as const, fallback_option: 1 as const } : {}),
  };
}

export function createBody(values: FormValues): Schemas['SessionCreate'] {
  return {
    org_id: values.org_id,
    name: values.name.trim(),
    type: values.type,
    duration: values.duration,
    schedule: values.date,
    time: to12h(values.time),
    timezone: values.timezone,
    is_public: values.is_public,
    ...focusBody(values.focus),
    ...recurrenceBody(values, values.date),
  };
}

type Change = (patch: Partial<FormValues>) => void;
/** Whether the last answer named this body field (useAction's `invalid`). */
type Invalid = (field: string) => true | undefined;

/** The form's fields; `occurrenceOnly` hides what one occurrence cannot change (contract section 10). */
export function SessionFields(props: { values: FormValues; change: Change; orgs: number[]; occurrenceOnly: boolean; home: string; invalid: Invalid }) {
  const { values, change, orgs, occurrenceOnly, home, invalid } = props;
  // The page shows instants in the home zone; these inputs are the session's local date and time, so they say which zone.
  const zone = values.timezone;
  const zoneHint = zone === home ? `Date and time in your home time zone, ${home}.` : `Date and time in the session's time zone, ${zone} (your home time zone is ${home}).`;
  return (
    <div class="fields">
      <label for="f-name">Name</label>
      <input id="f-name" required aria-invalid={invalid('name')} maxLength={SESSION_NAME_MAX} value={values.name} onInput={(e) => change({ name: e.currentTarget.value })} />
      <div class="pair">
        <div>
          <label for="f-date">Date</label>
          <input id="f-date" type="date" required aria-invalid={invalid('schedule') ?? invalid('recurring_start')} aria-describedby="f-zone" value={values.date} onInput={(e) => change({ date: e.currentTarget.value })} />
        </div>
        <div>
          <label for="f-time">Time</label>
          <input id="f-time" type="time" required aria-invalid={invalid('time')} aria-describedby="f-zone" value={values.time} onInput={(e) => change({ time: e.currentTarget.value })} />
        </div>
      </div>
      {/* A series keeps one zone; one occurrence cannot have its own (contract section 10). */}
      {!occurrenceOnly && (
        <>
          <label for="f-tz">Time zone</label>
          <select id="f-tz" aria-invalid={invalid('timezone')} aria-describedby="f-zone" value={zone} onChange={(e) => change({ timezone: e.currentTarget.value })}>
            {timeZones(zone, home).map((z) => (
              <option key={z} value={z}>
                {z}
              </option>
            ))}
          </select>
        </>
      )}
      <p class="hint" id="f-zone">
        {zoneHint}
      </p>
      <label for="f-duration">Duration in minutes</label>
      <input id="f-duration" type="number" aria-invalid={invalid('duration')} min={1} max={1440} required value={values.duration} onInput={(e) => change({ duration: Number(e.currentTarget.value) })} />
      {!occurrenceOnly && <SeriesFields values={values} change={change} orgs={orgs} invalid={invalid} />}
      <FocusFields values={values.focus} change={(patch) => change({ focus: { ...values.focus, ...patch } })} invalid={invalid} />
    </div>
  );
}

function SeriesFields({ values, change, orgs, invalid }: { values: FormValues; change: Change; orgs: number[]; invalid: Invalid }) {
  return (
    <>
      <label for="f-type">Type</label>
      <select id="f-type" aria-invalid={invalid('type')} value={values.type} onChange={(e) => change({ type: e.currentTarget.value as FormValues['type'] })}>
        <option value="standard">Standard</option>
        <option value="drop-in">Drop-in</option>
      </select>
      {orgs.length > 1 && (
        <>
          <label for="f-org">Team</label>
          <select id="f-org" aria-invalid={invalid('org_id')} value={values.org_id} onChange={(e) => change({ org_id: Number(e.currentTarget.value) })}>
            {orgs.map((org) => (
              <option key={org} value={org}>
                Org {org}
              </option>
            ))}
          </select>
        </>
      )}
      <label class="check">
        <input type="checkbox" checked={values.is_public} onChange={(e) => change({ is_public: e.currentTarget.checked })} /> Public: everyone in the team can see it and join
      </label>
      <label for="f-repeat">Repeats</label>
      <select id="f-repeat" value={values.repeat} onChange={(e) => change({ repeat: e.currentTarget.value as Repeat })}>
        <option value="none">Does not repeat</option>
        <option value="daily">Every day</option>
        <option value="weekly">Every week on this weekday</option>
        <option value="monthly">Every month on this day</option>
      </select>
      {values.repeat !== 'none' && (
        <>
          <label for="f-until">Ends on (optional)</label>
          <input id="f-until" type="date" aria-invalid={invalid('recurring_ends')} min={values.date} value={values.until} onInput={(e) => change({ until: e.currentTarget.value })} />
        </>
      )}
    </>
  );
}

export type Scope = 'occurrence' | 'following' | 'all';

/** The contract's "Apply to" radio group for an edit or a delete of a series. */
export function ApplyTo({ scope, change, name }: { scope: Scope; change: (scope: Scope) => void; name: string }) {
  const options: [Scope, string][] = [
    ['occurrence', 'This occurrence'],
    ['following', 'This and following'],
    ['all', 'All occurrences'],
  ];
  return (
    <fieldset class="apply-to" role="radiogroup" aria-label="Apply to">
      <legend>Apply to</legend>
      {options.map(([value, label]) => (
        <label key={value} class="check">
          <input type="radio" name={name} value={value} checked={scope === value} onChange={() => change(value)} /> {label}
        </label>
      ))}
    </fieldset>
  );
}
