import type { Storage } from '../../storage/database.js';
import type { AuthService } from '../auth/auth.service.js';
import { type Occurrence, type Reminder, createOccurrenceFeed } from './events.occurrences.js';
import type { Stream } from './events.sockets.js';

/** Token revocation and expiry, and the user's orgs, are checked this often at least (and at once when the auth revision moves). */
const TOKEN_CHECK_MS = 1_000;

/** Ends the streams whose token, user or orgs no longer hold; follows orgs joined. */
export function createTokenWatch(deps: { auth: AuthService; streams: ReadonlySet<Stream>; end: (stream: Stream) => void }) {
  let checkedAt = Date.now();
  /** The auth revision (AuthService.revision) the last check of the streams' tokens began at. */
  let checkedRevision: string | undefined;

  return async function checkTokens(): Promise<void> {
    // A revocation, disabled user or lost membership is acted on at the next tick, not the next look.
    const revision = deps.auth.revision();
    if (Date.now() - checkedAt < TOKEN_CHECK_MS && revision !== undefined && revision === checkedRevision) return;
    checkedAt = Date.now();
    checkedRevision = revision;
    const checked = new Set([...deps.streams].map((s) => s.tokenHash));
    const active = await deps.auth.activeTokens([...checked]);
    // Only the tokens asked about: a stream that opened while the query ran, with a token
    // no stream had before, is not in the answer and was authenticated just now.
    for (const stream of deps.streams) {
      if (!checked.has(stream.tokenHash)) continue;
      const orgIds = active.get(stream.tokenHash);
      // Revoked, expired, or its user disabled; or an org left (`focus users remove`): the stream
      // ends, and a reconnect starts over with what the user may see now.
      if (orgIds === undefined || stream.user.orgIds.some((org) => !orgIds.includes(org))) deps.end(stream);
      // An org joined is followed from then on.
      else if (orgIds.length !== stream.user.orgIds.length) stream.user = { ...stream.user, orgIds };
    }
  };
}

/** Tells each stream's user the reminders, starts and ends of the occurrences they are involved in, since the last look. */
export function createOccurrenceWatch(deps: { storage: Storage; streams: ReadonlySet<Stream>; write: (stream: Stream, text: string) => void }) {
  const occurrences = createOccurrenceFeed(deps.storage);
  /** The instant through which occurrences' starts and ends were announced (undefined: since the hub was idle). */
  let announcedThrough: string | undefined;

  const textOf = (event: string, o: Occurrence | Reminder, more: { minutes_before?: number } = {}) =>
    `event: ${event}\ndata: ${JSON.stringify({ session_id: o.session_id, occurrence_date: o.occurrence_date, starts_at: o.starts_at, ends_at: o.ends_at, ...more })}\n\n`;

  return {
    async announce(): Promise<void> {
      const now = new Date().toISOString();
      // Idle until now: what started while no stream was open is nobody's news.
      if (announcedThrough === undefined) announcedThrough = now;
      if (now <= announcedThrough) return;
      const [reminders, found] = await Promise.all([occurrences.reminders(announcedThrough, now), occurrences.between(announcedThrough, now)]);
      announcedThrough = now;
      // In time order; a reminder before a start at the same instant (minutes_before 0).
      const told = [
        ...reminders.map((r) => ({ at: r.at, org: r.org_id, to: (id: number) => id === r.user_id, text: textOf('session.starting', r, { minutes_before: r.minutes_before }) })),
        ...found.map((o) => ({ at: o.at, org: o.org_id, to: (id: number) => o.users.has(id), text: textOf(o.event, o) })),
      ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      for (const t of told) {
        for (const stream of deps.streams) if (stream.user.orgIds.includes(t.org) && t.to(stream.user.id)) deps.write(stream, t.text);
      }
    },
    reset() {
      announcedThrough = undefined;
    },
  };
}
