import { useEffect, useState } from 'preact/hooks';
import { type Session, api, must } from '../api.js';
import { useMe } from '../session.context.js';
import { countdown, dayLabel, dateIn, timeIn } from '../time.js';
import { Loading, Section, useLoad } from '../ui.js';
import { useBlockerCategories } from './session-focus.js';
import { sessionHref } from './week.js';

type Item = Session & { occurrence_date?: string };

/** The clock, once a second: the countdowns are computed from it, not from the server. */
function useClock(): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

/**
 * Reloads on every event of the stream (a change, a start, an end). EventSource sends the
 * session cookie (same origin) and reconnects with Last-Event-ID by itself.
 */
function useLive(reload: () => Promise<void>): boolean {
  const [live, setLive] = useState(false);
  useEffect(() => {
    const source = new EventSource('/api/v1/events', { withCredentials: true });
    const refresh = () => void reload();
    source.onopen = () => setLive(true);
    source.onerror = () => setLive(false);
    for (const type of ['change', 'session.started', 'session.ended', 'session.starting']) source.addEventListener(type, refresh);
    return () => source.close();
  }, [reload]);
  return live;
}

export function Now() {
  const me = useMe();
  const now = useClock();
  const state = useLoad(async () => must(await api.GET('/api/v1/me/now')), 'now');
  const live = useLive(state.reload);
  const data = state.data;
  // A countdown that reaches zero means the server's answer has changed: ask again once.
  const boundary = [...(data?.active ?? []).map((s) => s.ends_at), data?.next?.starts_at].filter((t): t is string => !!t).some((t) => Math.abs(Date.parse(t) - now) < 1000);
  useEffect(() => {
    if (boundary) setTimeout(() => void state.reload(), 1500);
  }, [boundary, state.reload]);

  const when = (item: Item) => `${dayLabel(dateIn(item.starts_at, me.timezone))} at ${timeIn(item.starts_at, me.timezone)}`;
  return (
    <>
      <h1 tabIndex={-1}>Now</h1>
      <p class="hint" role="status">
        {live ? 'Live: this page updates by itself.' : 'Connecting to live updates…'}
      </p>
      <Loading error={state.error} loading={state.loading && !data} />
      {data && (
        <>
          <Section title="Running">
            {data.active.length === 0 && <p class="empty">No session is running.</p>}
            {(data.active as Item[]).map((item) => (
              <div key={`${item.id}-${item.occurrence_date ?? ''}`} class="now-item">
                <a href={sessionHref(item)}>{item.name}</a>
                <p class="countdown">
                  Ends in <span role="timer">{countdown(Date.parse(item.ends_at) - now)}</span> (at {timeIn(item.ends_at, me.timezone)})
                </p>
              </div>
            ))}
            <Blocking blocker={data.website_blocker} snooze={data.snooze_apps} />
          </Section>
          <Section title="Next">
            {data.next ? (
              <div class="now-item">
                <a href={sessionHref(data.next)}>{data.next.name}</a>
                <p>
                  {when(data.next)} · starts in <span role="timer">{countdown(Date.parse(data.next.starts_at) - now)}</span>
                </p>
              </div>
            ) : (
              <p class="empty">Nothing planned.</p>
            )}
          </Section>
        </>
      )}
    </>
  );
}

function Blocking({ blocker, snooze }: { blocker: { category: string[]; urls: string[]; domains?: string[] } | null; snooze: Record<string, boolean> }) {
  const categories = useBlockerCategories();
  const snoozed = Object.entries(snooze).filter(([, on]) => on).map(([app]) => app);
  if (!blocker && snoozed.length === 0) return null;
  // A category by its name ("Social media"), as the session form offers it; by its id until the names have come.
  const named = (id: string) => categories.data?.find((c) => c.id === id)?.name ?? id;
  return (
    <div>
      {blocker && (
        <p>
          Blocked: {[...blocker.category.map(named), ...blocker.urls].join(', ') || 'nothing listed'}
        </p>
      )}
      {snoozed.length > 0 && <p>Snoozed apps: {snoozed.join(', ')}</p>}
    </div>
  );
}
