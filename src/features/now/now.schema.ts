import { Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { Envelope, Nullable } from '../../toolkit/schema-helpers.js';
import { categoryDomains } from '../blocker/blocker.categories.js';
import { SessionSchema } from '../sessions/sessions.schema.js';

/** Occurrences `active` lists at most: more than this many sessions of one user overlapping is no plan anyone follows. */
export const MAX_ACTIVE = 100;

/** The Session example, as a dated listing shows it: one occurrence, with its date. */
const exampleItem = { ...((SessionSchema as { examples?: Record<string, unknown>[] }).examples?.[0] ?? {}), occurrence_date: '2026-12-01' };

export const NowBlocker = Named(
  'NowWebsiteBlocker',
  Type.Object(
    {
      category: Type.Array(Type.String(), { description: 'Every category an active session blocks, each once.' }),
      domains: Type.Array(Type.String(), {
        description: 'The domains of those categories (`GET /api/v1/blocker/categories`), each once; each covers its subdomains.',
      }),
      urls: Type.Array(Type.String(), { description: 'Every URL or host an active `custom` blocker blocks, each once (a `preset` blocker blocks its categories only).' }),
    },
    { additionalProperties: false, description: 'What to block now: the union of the active sessions’ enabled website blockers.' },
  ),
);

export const NowSchema = Named(
  'Now',
  Type.Object(
    {
      active: Type.Array(SessionSchema, {
        maxItems: MAX_ACTIVE,
        description: `Occurrences running now (starts_at ≤ now < ends_at), by starts_at, then id; at most ${MAX_ACTIVE}. Items as dated listings show them.`,
      }),
      next: Nullable(SessionSchema, { description: 'The first occurrence that starts after now, or null.' }),
      website_blocker: Nullable(NowBlocker, { description: 'null when no active session has its website blocker enabled.' }),
      snooze_apps: Type.Record(Type.String(), Type.Boolean(), {
        description: 'App → whether to snooze it: the union of the active sessions’ enabled snoozes (true when any of them snoozes it); `{}` when none.',
      }),
    },
    {
      additionalProperties: false,
      description: 'What a blocking client enforces right now, over the sessions you created, collaborate on or joined.',
      examples: [
        {
          active: [exampleItem],
          next: null,
          website_blocker: { category: ['social'], domains: [...categoryDomains(['social'])], urls: ['news.ycombinator.com'] },
          snooze_apps: { Slack: true },
        },
      ],
    },
  ),
);

export const NowEnvelope = Envelope('NowEnvelope', NowSchema, 'What runs now, what comes next, and what to block.');
