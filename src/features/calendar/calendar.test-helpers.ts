import ICAL from 'ical.js';

export interface ExpandedOccurrence {
  occurrence_date: string;
  starts_at: string;
  ends_at: string;
}

export interface ParsedEvent {
  uid: string;
  summary: string;
  sequence: number;
  status: string;
  lastModified: string;
  /** The occurrences whose local date is in [from, to], as ical.js expands them. */
  expand(from: string, to: string): ExpandedOccurrence[];
}

const localDate = (t: ICAL.Time) => `${String(t.year).padStart(4, '0')}-${String(t.month).padStart(2, '0')}-${String(t.day).padStart(2, '0')}`;

/**
 * Parses a feed with Mozilla's ical.js, an implementation independent of ours: every
 * VTIMEZONE of the feed is registered first, so that times are read with the zones the
 * feed itself defines (not ical.js's or the runtime's).
 */
export function parseFeed(text: string): { calendar: ICAL.Component; timezones: string[]; events: Map<string, ParsedEvent> } {
  const calendar = new ICAL.Component(ICAL.parse(text));
  ICAL.TimezoneService.reset();
  const timezones: string[] = [];
  for (const vtz of calendar.getAllSubcomponents('vtimezone')) {
    const zone = new ICAL.Timezone(vtz);
    timezones.push(zone.tzid);
    ICAL.TimezoneService.register(zone);
  }
  const events = new Map<string, ParsedEvent>();
  // An edited occurrence is a VEVENT of its series' UID with RECURRENCE-ID: related to the series, as calendar apps do.
  const vevents = calendar.getAllSubcomponents('vevent');
  const edited = vevents.filter((v) => v.hasProperty('recurrence-id'));
  for (const vevent of vevents.filter((v) => !v.hasProperty('recurrence-id'))) {
    const event = new ICAL.Event(vevent);
    for (const exception of edited) if (exception.getFirstPropertyValue('uid') === event.uid) event.relateException(exception);
    events.set(event.uid, {
      uid: event.uid,
      summary: event.summary,
      sequence: event.sequence,
      status: String(vevent.getFirstPropertyValue('status')),
      lastModified: String(vevent.getFirstPropertyValue('last-modified')),
      expand(from, to) {
        const out: ExpandedOccurrence[] = [];
        const stop = Date.parse(`${to}T00:00:00Z`) + 3 * 86_400_000;
        const iterator = event.iterator();
        for (let next = iterator.next(); next !== null && next !== undefined; next = iterator.next()) {
          const details = event.getOccurrenceDetails(next);
          const start = details.startDate;
          if (start.toJSDate().getTime() > stop) break;
          const date = localDate(start);
          if (date < from || date > to) continue;
          out.push({ occurrence_date: date, starts_at: start.toJSDate().toISOString(), ends_at: details.endDate.toJSDate().toISOString() });
          if (!event.isRecurring()) break;
        }
        return out;
      },
    });
  }
  return { calendar, timezones, events };
}
