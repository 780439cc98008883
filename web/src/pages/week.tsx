import { type Session, api, must } from '../api.js';
import { navigate, useLocation } from '../router.js';
import { useMe } from '../session.context.js';
import { addDays, dateIn, dayLabel, isDate, timeIn, weekStart } from '../time.js';
import { Loading, useLoad } from '../ui.js';

type Item = Session & { occurrence_date?: string };

/**
 * Every visible session of the week (one item per occurrence of a series). The API lists
 * by each session's own local day; a day on either side is asked for too, and each item
 * is placed on its day in the person's home zone.
 */
async function loadWeek(start: string, zone: string): Promise<Map<string, Item[]>> {
  const items: Item[] = [];
  let cursor: string | undefined;
  do {
    const query = { day_start: addDays(start, -1), day_ends: addDays(start, 7), source: 'organization' as const, limit: 500, ...(cursor ? { cursor } : {}) };
    const result = await api.GET('/api/v1/sessions', { params: { query } });
    if (!result.data) must(result);
    items.push(...((result.data?.data ?? []) as Item[]));
    cursor = result.data?.next_cursor ?? undefined;
  } while (cursor);
  const days = new Map<string, Item[]>();
  for (let i = 0; i < 7; i++) days.set(addDays(start, i), []);
  for (const item of items) days.get(dateIn(item.starts_at, zone))?.push(item);
  return days;
}

export function sessionHref(item: Item): string {
  const date = item.occurrence_date ?? item.schedule;
  return item.is_recurring ? `/sessions/${item.id}?date=${date}` : `/sessions/${item.id}`;
}

export function Week() {
  const me = useMe();
  const location = useLocation();
  const today = dateIn(new Date(), me.timezone);
  const asked = location.searchParams.get('start');
  const start = weekStart(isDate(asked) ? asked : today);
  const { data, error, loading } = useLoad(() => loadWeek(start, me.timezone), `${start} ${me.timezone}`);
  const go = (to: string) => navigate(`/week?start=${to}`);
  const title = `Week of ${dayLabel(start)}`;
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>{title}</h1>
        <div class="row">
          <button type="button" class="secondary" onClick={() => go(addDays(start, -7))}>
            Previous week
          </button>
          <button type="button" class="secondary" onClick={() => go(weekStart(today))} disabled={start === weekStart(today)}>
            This week
          </button>
          <button type="button" class="secondary" onClick={() => go(addDays(start, 7))}>
            Next week
          </button>
          <button type="button" onClick={() => navigate(`/sessions/new?date=${start <= today && today < addDays(start, 7) ? today : start}`)}>
            New session
          </button>
        </div>
      </div>
      <p class="hint">Times in your home time zone, {me.timezone}.</p>
      <Loading error={error} loading={loading && !data} />
      {data && (
        <ol class="week" aria-label={title}>
          {[...data].map(([day, items]) => (
            <li key={day} class={day === today ? 'day today' : 'day'}>
              <h2 id={`day-${day}`}>
                {dayLabel(day, 'short')}
                {day === today && <span class="badge"> today</span>}
              </h2>
              {items.length === 0 ? (
                <p class="empty">Nothing planned</p>
              ) : (
                <ul aria-labelledby={`day-${day}`}>
                  {items.map((item) => (
                    <li key={`${item.id}-${item.occurrence_date ?? ''}`} class={`event ${item.status}`}>
                      <time dateTime={item.starts_at}>{timeIn(item.starts_at, me.timezone)}</time>
                      <a href={sessionHref(item)}>{item.name}</a>
                      <span class="meta">
                        {item.duration} min{item.is_recurring ? ' · repeats' : ''}
                        {item.status === 'completed' ? ' · completed' : ''}
                      </span>
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ol>
      )}
    </>
  );
}
