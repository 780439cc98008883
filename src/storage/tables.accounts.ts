import type { Generated } from 'kysely';
import type { Instant } from '../domain/vocabulary.js';

/** A one-time invitation to an org (contract section 12); the secret is shown once, only its SHA-256 is kept. */
export interface InvitesTable {
  id: Generated<number>;
  org_id: number;
  secret_hash: string;
  created_by: number | null;
  created_at: Instant;
  expires_at: Instant;
  used_at: Instant | null;
  used_by: number | null;
  revoked_at: Instant | null;
}

export type DeviceCodeStatus = 'pending' | 'approved' | 'denied' | 'issued';

/** An OAuth 2.0 device authorization request (RFC 8628); only the device code's SHA-256 is kept. */
export interface DeviceCodesTable {
  id: Generated<number>;
  device_code_hash: string;
  /** Eight characters of the user-code alphabet, without the dash shown to people. */
  user_code: string;
  /** The app's name, as its `client_id`. */
  client: string;
  /** Space-separated scopes asked for. */
  scopes: string;
  status: DeviceCodeStatus;
  /** Who approved or denied it. */
  user_id: number | null;
  created_at: Instant;
  expires_at: Instant;
  /** The last poll of the token endpoint: too early a poll answers `slow_down`. */
  polled_at: Instant | null;
  /** Seconds a client must wait between polls; grows by 5 with every `slow_down`. */
  interval_s: number;
}

/** A single sign-on attempt in flight, by the SHA-256 of its state; used once, within 10 minutes. */
export interface OidcLoginsTable {
  state_hash: string;
  /** The PKCE verifier the token request proves the code with. */
  code_verifier: string;
  /** What the ID token's `nonce` must be. */
  nonce: string;
  /** The SHA-256 of the invitation secret it carries, if any. */
  invite_hash: string | null;
  expires_at: Instant;
}
