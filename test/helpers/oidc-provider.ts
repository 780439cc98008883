import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Provider from 'oidc-provider';

/** What the test provider says about an account. */
export interface TestAccount {
  email: string;
  email_verified: boolean;
}

/**
 * The provider's interactions, completed at once: login as the account the test chose,
 * then consent to `openid email`. A real provider shows pages here; nothing else differs.
 */
async function interact(provider: Provider, req: IncomingMessage, res: ServerResponse, accountId: string): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
    return;
  }
  const grant = new provider.Grant({ accountId: details.session?.accountId ?? accountId, clientId: String(details.params.client_id) });
  grant.addOIDCScope('openid email');
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
}

/**
 * A real, certified OpenID Connect provider (`oidc-provider`) on 127.0.0.1 at a random
 * port, with one confidential client. Its address is known first (the app's configuration
 * needs it); the client is registered once the app's callback address is known.
 */
export async function startTestProvider() {
  // Its development notices (a Node 20 runtime, the in-memory adapter) are true of every test run: kept off the output.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void (String(args[0]).includes('oidc-provider WARNING') || warn(...args));
  const { default: Provider } = await import('oidc-provider');
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => {
    if (handler !== undefined) return handler(req, res);
    res.statusCode = 503;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'focus-test';
  const clientSecret = randomBytes(24).toString('base64url');
  const accounts = new Map<string, TestAccount>();
  let next = '';
  let discoveries = 0;

  return {
    issuer,
    clientId,
    clientSecret,
    /** The accounts it knows, by subject. */
    accounts,
    /** The account the next login interaction signs in as. */
    signInAs(subject: string) {
      next = subject;
    },
    /** How many times its discovery document was read. */
    discoveries: () => discoveries,
    register(redirectUri: string) {
      const key = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
      const provider = new Provider(issuer, {
        clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
        jwks: { keys: [{ ...key, kid: 'test', use: 'sig', alg: 'RS256' }] as never },
        cookies: { keys: [randomBytes(16).toString('hex')] },
        claims: { openid: ['sub'], email: ['email', 'email_verified'] },
        findAccount: (_ctx, sub) => {
          const account = accounts.get(sub);
          return account === undefined ? undefined : { accountId: sub, claims: () => ({ sub, ...account }) };
        },
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
        pkce: { required: () => true },
        ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, IdToken: 600 },
      });
      const callback = provider.callback();
      handler = (req, res) => {
        if (req.url === '/.well-known/openid-configuration') discoveries += 1;
        if (!req.url?.startsWith('/interaction/')) return void callback(req, res);
        interact(provider, req, res, next).catch(() => {
          res.statusCode = 500;
          res.end();
        });
      };
    },
    async close() {
      console.warn = warn;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type TestProvider = Awaited<ReturnType<typeof startTestProvider>>;

/** A browser's cookie jar (every server here is 127.0.0.1, and cookies ignore ports) and redirects followed by hand. */
export class TestBrowser {
  readonly cookies = new Map<string, string>();

  async get(url: string): Promise<{ status: number; location: string | undefined; text: string }> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const res = await fetch(url, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      if (/max-age=0\b/i.test(line) || /expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
    const location = res.headers.get('location');
    return { status: res.status, location: location === null ? undefined : new URL(location, url).href, text: await res.text() };
  }

  /** Follows redirects from `url` until one leads where `stop` says (returned), failing on an answer that is not a redirect. */
  async follow(url: string, stop: (next: URL) => boolean): Promise<URL> {
    let current = url;
    for (let hops = 0; hops < 20; hops += 1) {
      const res = await this.get(current);
      if (res.location === undefined) throw new Error(`${current} answered ${res.status}: ${res.text.slice(0, 300)}`);
      if (stop(new URL(res.location))) return new URL(res.location);
      current = res.location;
    }
    throw new Error('too many redirects');
  }
}
