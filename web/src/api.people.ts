/**
 * Section 12's people-and-apps endpoints (sign-in, invitations, device grants, tokens,
 * members, statistics). They are called by path because the typed client does not list
 * them yet; each name below is the only place the app spells such a path.
 */
import { call } from './api.js';

export interface Stats {
  buckets: { start: string; focused_minutes: number; sessions_completed: number; sessions_joined: number; tasks_completed: number }[];
  totals: { focused_minutes: number; sessions_completed: number; sessions_joined: number; tasks_completed: number };
  current_streak_days: number;
  longest_streak_days: number;
}

export interface PersonalToken {
  id: number;
  name: string | null;
  /** `cli`: issued by an operator; `personal`: made in Settings. */
  kind?: 'cli' | 'personal';
  /** null: all of the person's rights. */
  scopes: string[] | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  token?: string;
}

/** An app connected through the device grant (RFC 8628). */
export interface ConnectedApp {
  id: number;
  client_id: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
}

export interface Member {
  handle: string;
  role: 'admin' | 'member';
}

export interface Invite {
  id: number;
  org_id: number;
  /** The one-time link: only in the answer that creates it. */
  url?: string;
  expires_at: string;
  created_at?: string;
  status?: string;
}

export const SCOPES = ['sessions:read', 'sessions:write', 'tasks:read', 'tasks:write', 'me:read', 'admin'] as const;

const enc = encodeURIComponent;

/** Where single sign-on starts: a browser navigation to the provider, carrying an invitation's secret when there is one. */
export const singleSignOnStart = (inviteSecret?: string) => `/auth/oidc/start${inviteSecret === undefined ? '' : `?invite=${enc(inviteSecret)}`}`;

export const people = {
  login: (handle: string, password: string) => call<void>('POST', '/auth/login', { handle, password }),
  logout: () => call<void>('POST', '/auth/logout'),
  /** Whether the server offers single sign-on (404 when it is not configured). */
  singleSignOn: () => call<{ enabled: true }>('GET', '/auth/oidc').then(() => true, () => false),
  /** The invitation's secret travels in bodies only (the link carries it after `#`), never in a URL that logs keep. */
  previewInvite: (secret: string) => call<{ org_id: number; expires_at: string }>('POST', '/auth/invites/preview', { secret }),
  acceptInvite: (secret: string, body: { handle?: string; password?: string }) => call<{ handle: string; org_id: number }>('POST', '/auth/invites/accept', { secret, ...body }),
  approveDevice: (userCode: string) => call<unknown>('POST', '/api/v1/device/approve', { user_code: userCode }),
  denyDevice: (userCode: string) => call<unknown>('POST', '/api/v1/device/deny', { user_code: userCode }),
  tokens: () => call<PersonalToken[]>('GET', '/api/v1/me/tokens'),
  issueToken: (body: { name: string; scopes: string[] }) => call<PersonalToken>('POST', '/api/v1/me/tokens', body),
  revokeToken: (id: PersonalToken['id']) => call<void>('DELETE', `/api/v1/me/tokens/${id}`),
  apps: () => call<ConnectedApp[]>('GET', '/api/v1/me/apps'),
  revokeApp: (id: ConnectedApp['id']) => call<void>('DELETE', `/api/v1/me/apps/${id}`),
  stats: () => call<Stats>('GET', '/api/v1/me/stats'),
  members: (org: number) => call<Member[]>('GET', `/api/v1/orgs/${org}/members`),
  removeMember: (org: number, handle: string) => call<void>('DELETE', `/api/v1/orgs/${org}/members/${enc(handle)}`),
  invites: (org: number) => call<Invite[]>('GET', `/api/v1/orgs/${org}/invites`),
  invite: (org: number) => call<Invite>('POST', `/api/v1/orgs/${org}/invites`),
  revokeInvite: (org: number, id: Invite['id']) => call<void>('DELETE', `/api/v1/orgs/${org}/invites/${enc(String(id))}`),
};
