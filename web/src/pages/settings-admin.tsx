import { type Invite, type Member, people } from '../api.people.js';
import { useMe } from '../session.context.js';
import { dateTimeIn } from '../time.js';
import { Copyable, Notice, Section, useAction, useLoad } from '../ui.js';
import { useState } from 'preact/hooks';

/**
 * People and invitations of each org the person administers. Whether they do is what the
 * server answers: an org whose member list is refused is simply not shown.
 */
export function Admin() {
  const me = useMe();
  const orgs = useLoad(async () => {
    const admin: { org: number; members: Member[] }[] = [];
    for (const org of me.org_ids) {
      const members = await people.members(org).catch(() => null);
      if (members && members.some((m) => m.handle === me.handle && m.role === 'admin')) admin.push({ org, members });
    }
    return admin;
  }, `admin ${me.org_ids.join(',')}`);
  if (!orgs.data || orgs.data.length === 0) return null;
  return (
    <>
      {orgs.data.map(({ org, members }) => (
        <Org key={org} org={org} members={members} reload={orgs.reload} />
      ))}
    </>
  );
}

function Org({ org, members, reload }: { org: number; members: Member[]; reload: () => Promise<void> }) {
  const me = useMe();
  const invites = useLoad(() => people.invites(org).catch(() => [] as Invite[]), `invites ${org}`);
  const [link, setLink] = useState<string | null>(null);
  const { busy, message, run } = useAction();
  const invite = () =>
    void run(async () => {
      const created = await people.invite(org);
      setLink(created.url ?? null);
      await invites.reload();
      return `Invitation created; it expires ${dateTimeIn(created.expires_at, me.timezone)}.`;
    });
  const remove = (handle: string) =>
    void run(async () => {
      await people.removeMember(org, handle);
      await reload();
      return `${handle} was removed from the team.`;
    });
  const setRole = (handle: string, role: Member['role']) =>
    void run(async () => {
      await people.setRole(org, handle, role);
      await reload();
      return role === 'admin' ? `${handle} is now an admin.` : `${handle} is now a member.`;
    });
  const revoke = (id: Invite['id']) =>
    void run(async () => {
      await people.revokeInvite(org, id);
      await invites.reload();
      return 'Invitation revoked.';
    });
  return (
    <Section title={`People of team ${org}`}>
      <ul class="list">
        {members.map((m) => (
          <li key={m.handle}>
            <span>
              {m.handle} <span class="meta">{m.role}</span>
            </span>
            {m.handle !== me.handle && (
              <span>
                <button type="button" class="link" disabled={busy} onClick={() => setRole(m.handle, m.role === 'admin' ? 'member' : 'admin')}>
                  {m.role === 'admin' ? 'Make member' : 'Make admin'}
                  <span class="sr-only"> {m.handle}</span>
                </button>{' '}
                <button type="button" class="link" disabled={busy} aria-label={`Remove ${m.handle}`} onClick={() => remove(m.handle)}>
                  Remove
                </button>
              </span>
            )}
          </li>
        ))}
      </ul>
      <h3>Invitations</h3>
      <ul class="list">
        {invites.data?.map((i) => (
          <li key={i.id}>
            <span>{inviteText(i, me.timezone)}</span>
            {i.status === 'pending' && (
              <button type="button" class="link" disabled={busy} aria-label={`Revoke invitation ${i.id}`} onClick={() => revoke(i.id)}>
                Revoke
              </button>
            )}
          </li>
        ))}
      </ul>
      {link && <Copyable label="Invitation link" value={link} />}
      <button type="button" disabled={busy} onClick={invite}>
        Invite someone
      </button>
      <Notice message={message} />
    </Section>
  );
}

/** An invitation as a line of the list, its times in the home zone: when it expires only while it may still be accepted. */
function inviteText(i: Invite, zone: string): string {
  const at = (instant: string) => dateTimeIn(instant, zone);
  if (i.status === 'pending') return `Pending, expires ${at(i.expires_at)}`;
  if (i.status === 'expired') return `Expired ${at(i.expires_at)}`;
  return `${i.status === 'accepted' ? 'Accepted' : 'Revoked'}; sent ${at(i.created_at)}`;
}
