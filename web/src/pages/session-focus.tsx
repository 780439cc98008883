import { type Schemas, type Session, api, must } from '../api.js';
import { useLoad } from '../ui.js';

type Blocker = NonNullable<Schemas['SessionCreate']['website_blocker']>;
/** A preset category's id: the server lists them (GET /blocker/categories) and answers them in records. */
type CategoryId = NonNullable<Blocker['category']>[number];

/** What the form edits of a session's focus settings, as its inputs hold them. */
export interface FocusValues {
  block: boolean;
  categories: CategoryId[];
  /** Other sites to block, one host name or URL per line. */
  sites: string;
  snooze: boolean;
  /** Apps whose notifications are snoozed, one per line. */
  apps: string;
}

const lines = (text: string) => [...new Set(text.split('\n').map((l) => l.trim()).filter((l) => l !== ''))];

export function focusValues(session: Session | null): FocusValues {
  const blocker = session?.website_blocker ?? null;
  const snoozed = Object.entries(session?.snooze_apps ?? {}).filter(([, on]) => on).map(([app]) => app);
  return {
    block: session?.website_blocker_enabled ?? false,
    categories: (blocker?.category ?? []) as CategoryId[],
    sites: (blocker?.urls ?? []).join('\n'),
    snooze: session?.snooze_enabled ?? false,
    apps: snoozed.join('\n'),
  };
}

/** The API's blocker and snooze fields for the form's values: both lists are kept when switched off, to switch on again. */
export function focusBody(values: FocusValues) {
  const urls = lines(values.sites);
  const blocker: Blocker | null =
    values.categories.length === 0 && urls.length === 0 ? null : { mode: urls.length > 0 ? 'custom' : 'preset', category: values.categories, urls };
  return {
    website_blocker_enabled: values.block,
    website_blocker: blocker,
    snooze_enabled: values.snooze,
    snooze_apps: Object.fromEntries(lines(values.apps).map((app) => [app, true])),
  };
}

/** The preset categories (GET /blocker/categories): their ids, names and domains. */
export const useBlockerCategories = () => useLoad(async () => must(await api.GET('/api/v1/blocker/categories')), 'blocker categories');

/** Website blocking and notification snoozing: what a blocking client enforces while the session runs. */
export function FocusFields({ values, change, invalid }: { values: FocusValues; change: (patch: Partial<FocusValues>) => void; invalid: (field: string) => true | undefined }) {
  const categories = useBlockerCategories();
  const toggle = (id: CategoryId, on: boolean) => change({ categories: on ? [...values.categories, id] : values.categories.filter((c) => c !== id) });
  return (
    <fieldset class="focus">
      <legend>While it runs</legend>
      <label class="check">
        <input type="checkbox" checked={values.block} onChange={(e) => change({ block: e.currentTarget.checked })} /> Block websites
      </label>
      {values.block && (
        <>
          <div class="choices" role="group" aria-label="Categories to block">
            {(categories.data ?? []).map((c: Schemas['BlockerCategory']) => {
              const id = c.id as CategoryId;
              return (
                <label key={id} class="check" title={c.domains.join(', ')}>
                  <input type="checkbox" checked={values.categories.includes(id)} onChange={(e) => toggle(id, e.currentTarget.checked)} /> {c.name}
                </label>
              );
            })}
            {categories.error && <p role="alert">{categories.error}</p>}
          </div>
          <label for="f-sites">Other sites to block</label>
          <textarea id="f-sites" rows={3} aria-invalid={invalid('website_blocker')} aria-describedby="f-sites-hint" value={values.sites} onInput={(e) => change({ sites: e.currentTarget.value })} />
          <p class="hint" id="f-sites-hint">
            One per line: a host name such as example.com, or an address.
          </p>
        </>
      )}
      <label class="check">
        <input type="checkbox" checked={values.snooze} onChange={(e) => change({ snooze: e.currentTarget.checked })} /> Snooze notifications
      </label>
      {values.snooze && (
        <>
          <label for="f-apps">Apps to snooze</label>
          <textarea id="f-apps" rows={3} aria-invalid={invalid('snooze_apps')} aria-describedby="f-apps-hint" value={values.apps} onInput={(e) => change({ apps: e.currentTarget.value })} />
          <p class="hint" id="f-apps-hint">
            One app name per line, as your notification settings name it.
          </p>
        </>
      )}
    </fieldset>
  );
}
