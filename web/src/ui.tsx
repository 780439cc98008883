import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, messageOf } from './api.js';

/** Data loaded once per `key`, with `reload` after a change and the error as text. */
export function useLoad<T>(load: () => Promise<T>, key: string) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const reload = useCallback(async () => {
    try {
      const data = await load();
      setState({ data, loading: false });
    } catch (error) {
      setState({ error: messageOf(error), loading: false });
    }
    // `key` names what `load` reads; the closure itself changes on every render.
  }, [key]);
  useEffect(() => {
    setState((s) => ({ ...s, loading: true }));
    void reload();
  }, [reload]);
  return { ...state, reload };
}

/**
 * Runs an action, keeping its error (or its success message) for an aria-live region, and the
 * body fields a 422 named: `invalid('name')` for an input's aria-invalid (and its red border).
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [fields, setFields] = useState<readonly string[]>([]);
  const run = useCallback(async (action: () => Promise<string | void>) => {
    setBusy(true);
    setMessage(null);
    setFields([]);
    try {
      const done = await action();
      if (done) setMessage({ text: done, error: false });
    } catch (error) {
      setMessage({ text: messageOf(error), error: true });
      if (error instanceof ApiError) setFields(error.fields);
    } finally {
      setBusy(false);
    }
  }, []);
  const invalid = (field: string): true | undefined => (fields.includes(field) ? true : undefined);
  return { busy, message, run, invalid };
}

/** Where results and errors of an action are announced. */
export function Notice({ message }: { message: { text: string; error: boolean } | null }) {
  return (
    <p class={message?.error ? 'notice error' : 'notice'} role={message?.error ? 'alert' : 'status'}>
      {message?.text ?? ''}
    </p>
  );
}

export function Loading({ error, loading }: { error?: string | undefined; loading: boolean }) {
  if (error) return <p role="alert" class="notice error">{error}</p>;
  return loading ? <p role="status">Loading…</p> : null;
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  const id = `section-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <section aria-labelledby={id} class="card">
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A value shown once (a new token or secret) with a button that copies it. */
export function Copyable({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const id = `copy-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return (
    <div class="copyable">
      <label for={id}>{label}</label>
      <input id={id} readOnly value={value} onFocus={(e) => e.currentTarget.select()} />
      <button
        type="button"
        onClick={() => {
          void navigator.clipboard?.writeText(value).then(() => setCopied(true), () => setCopied(false));
        }}
      >
        Copy {label.toLowerCase()}
      </button>
      <span role="status">{copied ? 'Copied.' : ''}</span>
    </div>
  );
}
