import { useEffect, useState } from 'preact/hooks';
import { type Schemas, type Session, api, must } from '../api.js';
import { navigate, useLocation } from '../router.js';
import { useMe } from '../session.context.js';
import { dateIn, dayLabel, isDate, timeIn } from '../time.js';
import { Loading, Notice, useAction, useLoad } from '../ui.js';
import { ApplyTo, type FormValues, type Scope, SessionFields, createBody, initialValues, recurrenceBody } from './session-form.js';
import { Participation } from './session-participation.js';
import { Tasks } from './tasks.js';

type Loaded = Session & { occurrence_date?: string; participation?: Schemas['Participation'] };

/** `/sessions/new` creates; `/sessions/<id>?date=D` opens one session, or one occurrence of a series. */
export function SessionPage({ id }: { id: number | null }) {
  const me = useMe();
  const location = useLocation();
  const asked = location.searchParams.get('date');
  const date = isDate(asked) ? asked : dateIn(new Date(), me.timezone);
  const key = `${id ?? 'new'} ${asked ?? ''}`;
  const loaded = useLoad(async (): Promise<Loaded | null> => {
    if (id === null) return null;
    return must(await api.GET('/api/v1/sessions/{id}', { params: { path: { id }, query: isDate(asked) ? { date: asked } : {} } }));
  }, key);
  if (id !== null && !loaded.data) {
    return (
      <>
        <h1 tabIndex={-1}>Session</h1>
        <Loading error={loaded.error} loading={loaded.loading} />
      </>
    );
  }
  const session = loaded.data ?? null;
  return <SessionEditor key={key} session={session} date={session ? (asked && isDate(asked) ? asked : session.occurrence_date ?? session.schedule) : date} reload={loaded.reload} />;
}

function SessionEditor({ session, date, reload }: { session: Loaded | null; date: string; reload: () => Promise<void> }) {
  const me = useMe();
  const [values, setValues] = useState<FormValues>(() => initialValues(session, date, me.org_ids, me.timezone));
  const [scope, setScope] = useState<Scope>('occurrence');
  const { busy, message, run, invalid } = useAction();
  const series = session?.is_recurring === 1;
  const mine = session === null || session.created_by === me.handle;
  useEffect(() => setValues(initialValues(session, date, me.org_ids, me.timezone)), [session, date, me.org_ids, me.timezone]);
  const change = (patch: Partial<FormValues>) => setValues((v) => ({ ...v, ...patch }));

  const save = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      if (session === null) {
        const created = must(await api.POST('/api/v1/sessions', { body: createBody(values) }));
        navigate(created.is_recurring ? `/sessions/${created.id}?date=${values.date}` : `/sessions/${created.id}`, true);
        return;
      }
      const moved = await update(session, values, series ? scope : 'all', date);
      // An occurrence moved to another day keeps its own date (contract section 10): it is still read as ?date=<its day>.
      const shown = series && scope === 'occurrence' ? date : values.date;
      if (moved !== session.id || shown !== date) navigate(`/sessions/${moved}${series ? `?date=${shown}` : ''}`, true);
      else await reload();
      return 'Saved.';
    });
  };
  const remove = () =>
    void run(async () => {
      if (session === null) return;
      const query = !series || scope === 'all' ? { scope: 'series' as const } : { scope, date };
      const result = await api.DELETE('/api/v1/sessions/{id}', { params: { path: { id: session.id }, query } });
      if (!result.response.ok) must(result as never);
      navigate(`/week?start=${date}`);
    });

  const title = session === null ? 'New session' : session.name;
  return (
    <>
      <h1 tabIndex={-1}>{title}</h1>
      {session && (
        <p class="hint">
          {/* Day and time both in the home zone (the occurrence's own date may be another day there), and the session's own clock when its zone differs. */}
          {session.starts_at ? `${dayLabel(dateIn(session.starts_at, me.timezone))} at ${timeIn(session.starts_at, me.timezone)}` : dayLabel(date)}
          {session.starts_at && session.timezone !== me.timezone && ` (${timeIn(session.starts_at, session.timezone)} in ${session.timezone})`} · {session.duration} min · created by {session.created_by}
          {series && ' · repeats'} · {session.participants_count} joined · {stateOf(session)}
        </p>
      )}
      {session && <Participation session={session} date={date} series={series} reload={reload} />}
      {mine ? (
        <form class="card stack" onSubmit={save} aria-label={session ? 'Edit session' : 'New session'}>
          <SessionFields values={values} change={change} orgs={me.org_ids} occurrenceOnly={series && scope === 'occurrence'} home={me.timezone} invalid={invalid} />
          {series && <ApplyTo scope={scope} change={setScope} name="apply-to" />}
          <div class="row">
            <button type="submit" disabled={busy}>
              Save
            </button>
            {session && (
              <button type="button" class="danger" disabled={busy} onClick={remove}>
                Delete
              </button>
            )}
          </div>
          <Notice message={message} />
        </form>
      ) : (
        <p>Only {session?.created_by} can change this session.</p>
      )}
      {session && <Tasks sessionId={session.id} />}
    </>
  );
}

/** Where the session stands: its phase by the clock ("waiting", the status people set, said nothing of an ended one), or completed. */
function stateOf(session: Session): string {
  if (session.status === 'completed') return 'completed';
  return { upcoming: 'upcoming', running: 'running now', ended: 'ended' }[session.phase];
}

/** What one occurrence may change besides its day (contract section 10); a series also its type, channel and zone. */
const OCCURRENCE_FIELDS = ['name', 'time', 'duration', 'website_blocker_enabled', 'website_blocker', 'snooze_enabled', 'snooze_apps'] as const;
const SERIES_FIELDS = [...OCCURRENCE_FIELDS, 'type', 'is_public', 'timezone'] as const;

/**
 * The fields the person changed, of those named. Only these are sent: the page shows one
 * occurrence, and what an override set for it must not pass to the series, nor a field
 * sent for one occurrence become its own when it was not touched (later series edits pass
 * an occurrence's own fields by).
 */
function changedFields(session: Session, values: FormValues, date: string, names: readonly (typeof SERIES_FIELDS)[number][]) {
  const body = createBody(values);
  const before = createBody(initialValues(session, date, [session.org_id], session.timezone));
  return Object.fromEntries(names.filter((f) => JSON.stringify(body[f]) !== JSON.stringify(before[f])).map((f) => [f, body[f]]));
}

/** Saves with the chosen scope; answers the id the occurrence lives in afterwards (a split makes a new series). */
async function update(session: Session, values: FormValues, scope: Scope, date: string): Promise<number> {
  if (scope === 'occurrence') {
    const one = { ...changedFields(session, values, date, OCCURRENCE_FIELDS), ...(values.date !== date ? { schedule: values.date } : {}) };
    if (Object.keys(one).length > 0) must(await api.PUT('/api/v1/sessions/{id}', { params: { path: { id: session.id }, query: { date } }, body: one }));
    return session.id;
  }
  const fields = changedFields(session, values, date, SERIES_FIELDS);
  if (scope === 'following') {
    const split = must(await api.PUT('/api/v1/sessions/{id}', { params: { path: { id: session.id }, query: { date, scope: 'following' } }, body: { ...fields, ...recurrenceBody(values, values.date) } }));
    return split.id;
  }
  const series = session.is_recurring ? { ...recurrenceBody(values, values.date !== date ? values.date : (session.recurring_start ?? session.schedule)) } : { schedule: values.date };
  must(await api.PUT('/api/v1/sessions/{id}', { params: { path: { id: session.id } }, body: { ...fields, ...series, org_id: values.org_id } }));
  return session.id;
}
