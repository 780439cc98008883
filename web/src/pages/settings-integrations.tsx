import { useState } from 'preact/hooks';
import { type Schemas, api, must } from '../api.js';
import { Copyable, Loading, Notice, Section, useAction, useLoad } from '../ui.js';
import { FEED_NAME_MAX } from '../rules.js';

/** The `webcal://` form of a feed's address, which calendar apps subscribe to in one click. */
export function webcalOf(url: string): string {
  return new URL(url, window.location.origin).href.replace(/^https?:\/\//, 'webcal://');
}

export function Feeds() {
  const feeds = useLoad(async () => must(await api.GET('/api/v1/calendar-feeds')), 'feeds');
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ url: string; webcal: string } | null>(null);
  const { busy, message, run, invalid } = useAction();
  const create = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      const feed = must(await api.POST('/api/v1/calendar-feeds', { body: name.trim() ? { name: name.trim() } : {} })) as Schemas['CalendarFeed'] & { url: string; webcal_url?: string };
      setCreated({ url: new URL(feed.url, window.location.origin).href, webcal: feed.webcal_url ?? webcalOf(feed.url) });
      setName('');
      await feeds.reload();
      return 'Feed created: copy its link now, it is shown only once.';
    });
  };
  const remove = (id: number) =>
    void run(async () => {
      const result = await api.DELETE('/api/v1/calendar-feeds/{id}', { params: { path: { id } } });
      if (!result.response.ok) must(result as never);
      await feeds.reload();
      return 'Feed revoked: its link no longer works.';
    });
  return (
    <Section title="Calendar feeds">
      <p class="hint">Subscribe to your sessions from Google, Apple or Outlook calendars.</p>
      <Loading error={feeds.error} loading={feeds.loading && !feeds.data} />
      <ul class="list">
        {feeds.data?.map((feed) => (
          <li key={feed.id}>
            <span>{feed.name}</span>
            <button type="button" class="link" disabled={busy} aria-label={`Revoke feed ${feed.name}`} onClick={() => remove(feed.id)}>
              Revoke
            </button>
          </li>
        ))}
      </ul>
      {created && (
        <>
          <Copyable label="Calendar link" value={created.webcal} />
          <a href={created.webcal} data-external>
            Open in your calendar app
          </a>
        </>
      )}
      <form class="row" onSubmit={create}>
        <label for="feed-name">Feed name</label>
        <input id="feed-name" aria-invalid={invalid('name')} maxLength={FEED_NAME_MAX} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Create feed
        </button>
      </form>
      <Notice message={message} />
    </Section>
  );
}

const EVENTS: Schemas['WebhookCreate']['events'] = ['session.created', 'session.updated', 'session.deleted', 'session.participation', 'session.starting', 'session.started', 'session.ended', 'task.created', 'task.updated', 'task.deleted'];

export function Webhooks() {
  const hooks = useLoad(async () => must(await api.GET('/api/v1/webhooks')), 'webhooks');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Set<string>>(new Set(['session.started', 'session.ended']));
  const [secret, setSecret] = useState<string | null>(null);
  const { busy, message, run } = useAction();
  const create = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      const hook = must(await api.POST('/api/v1/webhooks', { body: { url: url.trim(), events: EVENTS.filter((e) => events.has(e)) } }));
      setSecret((hook as { secret?: string }).secret ?? null);
      setUrl('');
      await hooks.reload();
      return 'Webhook added: copy its signing secret now, it is shown only once.';
    });
  };
  const remove = (id: string) =>
    void run(async () => {
      const result = await api.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: id as never } } });
      if (!result.response.ok) must(result as never);
      await hooks.reload();
      return 'Webhook deleted.';
    });
  const toggle = (name: string, on: boolean) => setEvents((s) => (on ? new Set([...s, name]) : new Set([...s].filter((e) => e !== name))));
  return (
    <Section title="Webhooks">
      <Loading error={hooks.error} loading={hooks.loading && !hooks.data} />
      <ul class="list">
        {hooks.data?.map((hook) => (
          <li key={hook.id}>
            <span class="wrap">{hook.url}</span>
            <button type="button" class="link" disabled={busy} aria-label={`Delete webhook ${hook.url}`} onClick={() => remove(hook.id)}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      {secret && <Copyable label="Signing secret" value={secret} />}
      <form class="stack" onSubmit={create}>
        <label for="hook-url">Webhook address</label>
        <input id="hook-url" type="url" required placeholder="https://" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        <fieldset>
          <legend>Events</legend>
          <div class="checks">
            {EVENTS.map((name) => (
              <label key={name} class="check">
                <input type="checkbox" checked={events.has(name)} onChange={(e) => toggle(name, e.currentTarget.checked)} /> {name}
              </label>
            ))}
          </div>
        </fieldset>
        <button type="submit" disabled={busy || events.size === 0}>
          Add webhook
        </button>
      </form>
      <Notice message={message} />
    </Section>
  );
}
