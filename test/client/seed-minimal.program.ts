/*
 * A client program that sends, in every request body, only what the interface document
 * requires, typed by plain `npx openapi-typescript <document>` output (no options).
 * test/client/plain-codegen.test.ts compiles it with tsc against types generated from a
 * served document and runs it against that server; `npm run typecheck` compiles it against
 * the shipped clients/typescript/schema.d.ts (generated the same way). Prints one line per
 * call: `<what> <status>`.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from '../../clients/typescript/schema.js';

type Schemas = components['schemas'];

// The bodies as plain values of the generated types: only the required fields.
const session: Schemas['SessionCreate'] = { org_id: 1, name: 'Focus', type: 'standard', duration: 25, schedule: '2026-12-01', time: '9:00 AM' };
const sessionUpdate: Schemas['SessionUpdate'] = { name: 'Renamed' }; // an update changes at least one field
const taskUpdate: Schemas['TaskUpdate'] = { is_completed: true };
const feed: Schemas['CalendarFeedCreate'] = {};
const me: Schemas['MeUpdate'] = { timezone: 'Europe/Berlin' };
const webhook: Schemas['WebhookCreate'] = { url: process.env.HOOK_URL ?? 'https://hooks.example.com/focus', events: ['task.created'] };

// Records read back are typed too: no field of a record is `unknown`.
const describe = (record: Schemas['Session']): string => `${record.id}:${record.status}:${record.website_blocker_enabled}`;

const focus = createClient<paths>({ baseUrl: process.env.FOCUS_URL ?? 'http://127.0.0.1:8080', headers: { authorization: `Bearer ${process.env.FOCUS_TOKEN ?? ''}` } });
const line = (what: string, response: Response) => console.log(`${what} ${response.status}`);

const created = await focus.POST('/api/v1/sessions', { body: session });
line('session', created.response);
if (created.data === undefined) throw new Error('no session');
const sessionId = created.data.data.id;
console.log(`session record ${describe(created.data.data)}`);
line('session update', (await focus.PUT('/api/v1/sessions/{id}', { params: { path: { id: sessionId } }, body: sessionUpdate })).response);

const task = await focus.POST('/api/v1/tasks', { body: { context: 'Write', session_id: sessionId } });
line('task', task.response);
if (task.data === undefined) throw new Error('no task');
line('task update', (await focus.PUT('/api/v1/tasks/{id}', { params: { path: { id: Number(task.data.data.id) } }, body: taskUpdate })).response);
const bulk = { session_id: sessionId, tasks: [{ context: 'Imported', source: 'linear', source_id: 'ENG-1' }] } satisfies Schemas['TaskImport'];
line('import', (await focus.POST('/api/v1/tasks/bulk', { body: bulk })).response);

line('me', (await focus.PUT('/api/v1/me', { body: me })).response);
line('calendar feed', (await focus.POST('/api/v1/calendar-feeds', { body: feed })).response);
line('webhook', (await focus.POST('/api/v1/webhooks', { body: webhook })).response);
