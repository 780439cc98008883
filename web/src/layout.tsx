import type { ComponentChildren } from 'preact';
import { people } from './api.people.js';
import { navigate, onLinkClick, useFocusHeading } from './router.js';
import { useSigned } from './session.context.js';

const LINKS = [
  ['/week', 'Week'],
  ['/now', 'Now'],
  ['/stats', 'Statistics'],
  ['/settings', 'Settings'],
] as const;

/** Skip link, header with the main navigation, and the page in <main>. */
export function Layout({ path, children }: { path: string; children: ComponentChildren }) {
  const { me, refresh } = useSigned();
  useFocusHeading(path);
  const signOut = async () => {
    await people.logout().catch(() => undefined);
    await refresh();
    navigate('/sign-in');
  };
  return (
    <div onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={me ? '/week' : '/sign-in'}>
          Focus
        </a>
        {me && (
          <nav aria-label="Main">
            <ul>
              {LINKS.map(([href, label]) => (
                <li key={href}>
                  <a href={href} aria-current={path === href || (href === '/week' && path === '/') ? 'page' : undefined}>
                    {label}
                  </a>
                </li>
              ))}
              <li>
                <button type="button" class="link" onClick={() => void signOut()}>
                  Sign out
                </button>
              </li>
            </ul>
          </nav>
        )}
      </header>
      <main id="main">{children}</main>
    </div>
  );
}
