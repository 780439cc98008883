import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type Me, api, whenSignedOut } from './api.js';
import { Layout } from './layout.js';
import { Device } from './pages/device.js';
import { Invite } from './pages/invite.js';
import { Now } from './pages/now.js';
import { SessionPage } from './pages/session.js';
import { Settings } from './pages/settings.js';
import { SignIn } from './pages/sign-in.js';
import { Stats } from './pages/stats.js';
import { Week } from './pages/week.js';
import { navigate, useLocation } from './router.js';
import { SignedContext } from './session.context.js';

/** Pages anyone may open; every other page sends a signed-out person to sign in first. */
const PUBLIC = [/^\/sign-in$/, /^\/invite(\/|$)/];

function page(path: string) {
  if (path === '/sign-in') return <SignIn />;
  // Links read `/invite#<secret>`: the fragment never reaches a server or its logs.
  if (path === '/invite') return <Invite secret={decodeURIComponent(window.location.hash.slice(1))} />;
  if (path.startsWith('/invite/')) return <Invite secret={decodeURIComponent(path.slice('/invite/'.length))} />;
  if (path === '/device') return <Device />;
  if (path === '/now') return <Now />;
  if (path === '/stats') return <Stats />;
  if (path === '/settings') return <Settings />;
  const session = /^\/sessions\/(new|\d+)$/.exec(path);
  if (session) return <SessionPage id={session[1] === 'new' ? null : Number(session[1])} />;
  if (path === '/' || path === '/week') return <Week />;
  return (
    <>
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        There is nothing at this address. <a href="/week">Go to your week</a>.
      </p>
    </>
  );
}

/**
 * The sign-in page that returns to `here`; `ended`: it says the session ended. The fragment (an
 * invitation's secret) rides on the sign-in page's own fragment: never in a URL a server sees.
 */
const signInFor = (here: Pick<URL, 'pathname' | 'search' | 'hash'>, ended: boolean) =>
  `/sign-in?${ended ? 'ended=1&' : ''}next=${encodeURIComponent(here.pathname + here.search)}${here.hash}`;

function App() {
  const location = useLocation();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const refresh = useCallback(async () => {
    const { data } = await api.GET('/api/v1/me');
    const next = data?.data ?? null;
    setMe(next);
    return next;
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  // A session that ends while the app is open (a new password, signed out elsewhere) leads to
  // sign-in, which says why and comes back here; a refused sign-in, with nobody signed in, does not.
  const signedIn = useRef(false);
  signedIn.current = Boolean(me);
  useEffect(
    () =>
      whenSignedOut(() => {
        if (!signedIn.current) return;
        signedIn.current = false;
        setMe(null);
        navigate(signInFor(window.location, true), true);
      }),
    [],
  );

  const path = location.pathname.replace(/\/+$/, '') || '/';
  const open = PUBLIC.some((p) => p.test(path));
  useEffect(() => {
    if (me === null && !open) navigate(signInFor({ pathname: path, search: location.search, hash: location.hash }, false), true);
  }, [me, open, path, location.search, location.hash]);

  if (me === undefined || (me === null && !open)) return <p role="status">Loading…</p>;
  return (
    <SignedContext.Provider value={{ me, refresh }}>
      <Layout path={path}>{page(path)}</Layout>
    </SignedContext.Provider>
  );
}

render(<App />, document.getElementById('app') as HTMLElement);
