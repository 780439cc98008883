import { type Static, Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { Envelope, Instant, TrimmedLabel } from '../../toolkit/schema-helpers.js';

/** Feeds one user may hold at once: each is polled by a calendar app, and each listing answers them all (no paging). */
export const MAX_FEEDS_PER_USER = 20;

/**
 * Sessions one feed holds at most: a session may carry up to 1,000 removed occurrences
 * (EXDATE), so this keeps a feed well under the 16 MiB any answer may weigh. Beyond it the
 * feed holds the most recently changed sessions and says so (`X-Focus-Feed-Truncated`).
 */
export const MAX_FEED_EVENTS = 500;

const EXAMPLE_CREATED = '2026-11-26T09:30:00.000Z';

export const CreateCalendarFeedBody = Named(
  'CalendarFeedCreate',
  Type.Object(
    { name: Type.Optional(TrimmedLabel(100, { description: 'A label for you, 1–100 characters after trimming, on one line (no control characters); default `Focus sessions`.' })) },
    { additionalProperties: false, description: 'A new calendar feed; the body may be empty.', examples: [{ name: 'Work laptop calendar' }, {}] },
  ),
);
export type CreateCalendarFeedBody = Static<typeof CreateCalendarFeedBody>;

const feedFields = {
  id: Type.Integer({ readOnly: true }),
  name: Type.String(),
  created_at: Instant({ readOnly: true }),
};

export const CalendarFeedSchema = Named(
  'CalendarFeed',
  Type.Object(feedFields, {
    additionalProperties: false,
    description: 'A calendar feed, without its secret (shown once, when created).',
    examples: [{ id: 3, name: 'Work laptop calendar', created_at: EXAMPLE_CREATED }],
  }),
);
export type CalendarFeed = Static<typeof CalendarFeedSchema>;

export const CreatedCalendarFeedSchema = Named(
  'CreatedCalendarFeed',
  Type.Object(
    {
      ...feedFields,
      url: Type.String({
        readOnly: true,
        description:
          'Root-relative subscription URL, `/ical/<secret>.ics`: prefix it with this server’s origin and give it to a calendar app. ' +
          'The secret is shown only in this answer; anyone holding the URL can read the feed until you delete it.',
      }),
      webcal_url: Type.Optional(
        Type.String({
          readOnly: true,
          description: 'The same feed as an absolute `webcal://` address (a click on it subscribes in most calendar apps); present only when the server has PUBLIC_URL set.',
        }),
      ),
    },
    {
      additionalProperties: false,
      description: 'A calendar feed as created: the only time its URL (with the secret) is shown.',
      examples: [
        {
          id: 3,
          name: 'Work laptop calendar',
          url: '/ical/Qm9vdHN0cmFwIHNlY3JldCBleGFtcGxlIG9ubHkgMDA.ics',
          webcal_url: 'webcal://focus.example.com/ical/Qm9vdHN0cmFwIHNlY3JldCBleGFtcGxlIG9ubHkgMDA.ics',
          created_at: EXAMPLE_CREATED,
        },
      ],
    },
  ),
);
export type CreatedCalendarFeed = Static<typeof CreatedCalendarFeedSchema>;

export const CreatedCalendarFeedEnvelope = Envelope('CreatedCalendarFeedEnvelope', CreatedCalendarFeedSchema, 'The feed, with its URL (shown once).');

export const CalendarFeedList = Named(
  'CalendarFeedList',
  Type.Object(
    { data: Type.Array(CalendarFeedSchema, { maxItems: MAX_FEEDS_PER_USER }), next_cursor: Type.Null({ description: 'Always null: one page holds them all.' }) },
    {
      additionalProperties: false,
      description: `Your calendar feeds, oldest first, in the list envelope of every list (one page: a user holds at most ${MAX_FEEDS_PER_USER}).`,
      examples: [{ data: [{ id: 3, name: 'Work laptop calendar', created_at: EXAMPLE_CREATED }], next_cursor: null }],
    },
  ),
);

/**
 * The `.ics` body, for the OpenAPI document (the route sends text, not JSON): a string, sent
 * as the UTF-8 bytes the feed was rendered to once (calendar.service.ts), hence Buffer in TypeScript.
 */
export const ICalendarText = Named(
  'ICalendar',
  Type.Unsafe<string | Buffer>(
    Type.String({
      description: 'An RFC 5545 VCALENDAR: a VTIMEZONE per zone used, then one VEVENT per session.',
      examples: ['BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Focus//Focus calendar feed//EN\r\nBEGIN:VEVENT\r\nUID:session-7@focus\r\n…\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n'],
    }),
  ),
);

/** The `.ics` path parameter: anything, so that every unknown secret gets the same 404. */
export const IcalParams = Type.Object({ file: Type.String({ description: '`<secret>.ics`, as in the feed’s `url`.' }) });
