import { type Schemas, type Session, api, must } from '../api.js';
import { Notice, useAction } from '../ui.js';

type Part = Schemas['Participation'];

/** Join, leave and complete, for the one occurrence shown when the session is a series. */
export function Participation({ session, date, series, reload }: { session: Session & { participation?: Part }; date: string; series: boolean; reload: () => Promise<void> }) {
  const { busy, message, run } = useAction();
  const part = session.participation;
  const params = { path: { id: session.id }, query: series ? { date } : {} };
  const act = (path: '/api/v1/sessions/{id}/join' | '/api/v1/sessions/{id}/leave' | '/api/v1/sessions/{id}/complete', done: string) =>
    void run(async () => {
      must(await api.POST(path, { params }));
      await reload();
      return done;
    });
  const joined = part?.joined === true;
  const completed = Boolean(part?.completed_at);
  const host = part?.role === 'host';
  // Only what the API would do is offered: join until you have (and while the session is not
  // completed), complete once joined, leave unless you host it (the host always takes part).
  const canJoin = !joined && !completed && session.status !== 'completed';
  return (
    <section class="card" aria-labelledby="participation">
      <h2 id="participation">Taking part</h2>
      <p>{sentenceOf(part, session.status)}</p>
      <div class="row">
        {canJoin && (
          <button type="button" disabled={busy} onClick={() => act('/api/v1/sessions/{id}/join', 'Joined.')}>
            Join
          </button>
        )}
        {joined && !completed && (
          <button type="button" disabled={busy} onClick={() => act('/api/v1/sessions/{id}/complete', 'Completed.')}>
            Complete
          </button>
        )}
        {joined && !completed && !host && (
          <button type="button" class="secondary" disabled={busy} onClick={() => act('/api/v1/sessions/{id}/leave', 'Left.')}>
            Leave
          </button>
        )}
      </div>
      <Notice message={message} />
    </section>
  );
}

/** Where the reader stands with the session shown, in a sentence. */
function sentenceOf(part: Part | undefined, status: Session['status']): string {
  if (part?.completed_at) return 'You completed this session.';
  if (part?.role === 'host') return 'You host this session, so you always take part.';
  if (part?.joined) return `You joined${part.role ? ` as ${part.role}` : ''}.`;
  return status === 'completed' ? 'This session is completed; it can no longer be joined.' : 'You have not joined this session.';
}
