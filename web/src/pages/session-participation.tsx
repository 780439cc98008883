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
  return (
    <section class="card" aria-labelledby="participation">
      <h2 id="participation">Taking part</h2>
      <p>
        {part?.completed_at ? 'You completed this session.' : part?.joined ? `You joined${part.role ? ` as ${part.role}` : ''}.` : 'You have not joined this session.'}
      </p>
      <div class="row">
        <button type="button" disabled={busy} onClick={() => act('/api/v1/sessions/{id}/join', 'Joined.')}>
          Join
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => act('/api/v1/sessions/{id}/leave', 'Left.')}>
          Leave
        </button>
        <button type="button" disabled={busy} onClick={() => act('/api/v1/sessions/{id}/complete', 'Completed.')}>
          Complete
        </button>
      </div>
      <Notice message={message} />
    </section>
  );
}
