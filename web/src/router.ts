/**
 * A small history router: the server answers index.html for every app path, and links
 * inside the app change the URL without a reload. Focus moves to the new page's heading
 * so that a screen reader announces where the person landed.
 */
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

export function navigate(to: string, replace = false): void {
  if (replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  for (const listener of listeners) listener();
}

window.addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

/** The current location, re-rendered on every navigation. */
export function useLocation(): URL {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return new URL(window.location.href);
}

/** Same-origin left clicks on app links navigate in place; others (new tab, /docs) go to the browser. */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.target as Element | null)?.closest('a');
  if (!anchor || anchor.target || anchor.origin !== window.location.origin || anchor.hasAttribute('data-external')) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}

/** Moves focus to the page's first heading after it renders. */
export function useFocusHeading(key: string): void {
  useEffect(() => {
    document.querySelector<HTMLElement>('main h1')?.focus();
  }, [key]);
}
