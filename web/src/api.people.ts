/**
 * Section 12's people-and-apps endpoints (sign-in, invitations, device grants, tokens,
 * members, statistics) on the generated typed client: paths, bodies and answers are
 * checked against the OpenAPI document at build time.
 */
import { api, done, must, type Schemas } from './api.js';

export type Stats = Schemas['Stats'];
export type PersonalToken = Schemas['TokenList']['data'][number] & { token?: string };
/** An app connected through the device grant (RFC 8628). */
export type ConnectedApp = Schemas['ConnectedAppList']['data'][number];
export type Member = Schemas['MemberList']['data'][number];
export type Invite = Schemas['InviteList']['data'][number];

export type Scope = Schemas['CreateTokenBody']['scopes'][number];
/**
 * Every scope the API names, in the order the pages list them, with what it lets a token do
 * in the words of the person granting it: a scope the server adds or drops fails the build here.
 */
export const SCOPE_WORDS = {
  'sessions:read': 'see the sessions you can see',
  'sessions:write': 'see, create, change and join sessions as you',
  'tasks:read': 'see your tasks',
  'tasks:write': 'see, create and change your tasks',
  'me:read': 'see your profile, what runs now, your statistics and live events',
  admin: "manage your team's people and invitations, where you are an admin",
} satisfies Record<Scope, string>;
export const SCOPES = Object.keys(SCOPE_WORDS) as Scope[];
export const scopeWords = (scope: string): string | undefined => (SCOPES as string[]).includes(scope) ? SCOPE_WORDS[scope as Scope] : undefined;

const org = (id: number) => ({ params: { path: { id } } });

/** Where single sign-on starts: a browser navigation to the provider, carrying an invitation's secret when there is one. */
export const singleSignOnStart = (inviteSecret?: string) => `/auth/oidc/start${inviteSecret === undefined ? '' : `?invite=${encodeURIComponent(inviteSecret)}`}`;

export const people = {
  login: async (handle: string, password: string) => done(await api.POST('/auth/login', { body: { handle, password } })),
  logout: async () => done(await api.POST('/auth/logout')),
  /** Whether the server offers single sign-on (404 when it is not configured). */
  singleSignOn: async () => (await api.GET('/auth/oidc')).response.ok,
  /** The invitation's secret travels in bodies only (the link carries it after `#`), never in a URL that logs keep. */
  previewInvite: async (secret: string) => must(await api.POST('/auth/invites/preview', { body: { secret } })),
  acceptInvite: async (secret: string, body: { handle?: string; password?: string }) =>
    must(await api.POST('/auth/invites/accept', { body: { secret, ...body } })),
  /** The app waiting with a code, and the scopes it asks for (404 when none waits). */
  deviceRequest: async (userCode: string) => must(await api.GET('/api/v1/device', { params: { query: { user_code: userCode } } })),
  approveDevice: async (userCode: string) => done(await api.POST('/api/v1/device/approve', { body: { user_code: userCode } })),
  denyDevice: async (userCode: string) => done(await api.POST('/api/v1/device/deny', { body: { user_code: userCode } })),
  changePassword: async (body: Schemas['ChangePasswordBody']) => done(await api.PUT('/api/v1/me/password', { body })),
  tokens: async () => must(await api.GET('/api/v1/me/tokens')),
  issueToken: async (body: Schemas['CreateTokenBody']) => must(await api.POST('/api/v1/me/tokens', { body })),
  revokeToken: async (id: number) => done(await api.DELETE('/api/v1/me/tokens/{id}', { params: { path: { id } } })),
  apps: async () => must(await api.GET('/api/v1/me/apps')),
  revokeApp: async (id: number) => done(await api.DELETE('/api/v1/me/apps/{id}', { params: { path: { id } } })),
  stats: async () => must(await api.GET('/api/v1/me/stats')),
  members: async (id: number) => must(await api.GET('/api/v1/orgs/{id}/members', org(id))),
  setRole: async (id: number, handle: string, role: Member['role']) =>
    must(await api.PATCH('/api/v1/orgs/{id}/members/{handle}', { params: { path: { id, handle } }, body: { role } })),
  removeMember: async (id: number, handle: string) =>
    done(await api.DELETE('/api/v1/orgs/{id}/members/{handle}', { params: { path: { id, handle } } })),
  invites: async (id: number) => must(await api.GET('/api/v1/orgs/{id}/invites', org(id))),
  invite: async (id: number) => must(await api.POST('/api/v1/orgs/{id}/invites', org(id))),
  revokeInvite: async (id: number, inviteId: number) =>
    done(await api.DELETE('/api/v1/orgs/{id}/invites/{inviteId}', { params: { path: { id, inviteId } } })),
};
