import { useState } from 'preact/hooks';
import { type Task, api, must } from '../api.js';
import { Loading, Notice, Section, useAction, useLoad } from '../ui.js';
import { TASK_CONTEXT_MAX } from '../rules.js';

/** The person's own tasks committed to a session: add, tick off, remove. */
export function Tasks({ sessionId }: { sessionId: number }) {
  const tasks = useLoad(async () => must(await api.GET('/api/v1/tasks', { params: { query: { session_id: sessionId } } })), `tasks ${sessionId}`);
  const [context, setContext] = useState('');
  const { busy, message, run, invalid } = useAction();
  const add = (event: Event) => {
    event.preventDefault();
    void run(async () => {
      must(await api.POST('/api/v1/tasks', { body: { session_id: sessionId, context: context.trim() } }));
      setContext('');
      await tasks.reload();
      return 'Task added.';
    });
  };
  const tick = (task: Task) =>
    void run(async () => {
      must(await api.PUT('/api/v1/tasks/{id}', { params: { path: { id: Number(task.id) } }, body: { is_completed: !task.is_completed } }));
      await tasks.reload();
    });
  const remove = (task: Task) =>
    void run(async () => {
      const result = await api.DELETE('/api/v1/tasks/{id}', { params: { path: { id: Number(task.id) } } });
      if (!result.response.ok) must(result as never);
      await tasks.reload();
      return `Removed “${task.context}”.`;
    });
  return (
    <Section title="Your tasks">
      <Loading error={tasks.error} loading={tasks.loading && !tasks.data} />
      {tasks.data && tasks.data.length === 0 && <p class="empty">No tasks yet.</p>}
      <ul class="tasks">
        {tasks.data?.map((task) => (
          <li key={task.id}>
            <label class="check">
              <input type="checkbox" checked={task.is_completed} disabled={busy} onChange={() => tick(task)} />
              <span class={task.is_completed ? 'done' : ''}>{task.context}</span>
            </label>
            <button type="button" class="link" disabled={busy} onClick={() => remove(task)} aria-label={`Remove task ${task.context}`}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <form class="row" onSubmit={add}>
        <label for="new-task" class="sr-only">
          New task
        </label>
        <input id="new-task" required aria-invalid={invalid('context')} maxLength={TASK_CONTEXT_MAX} placeholder="What will you do?" value={context} onInput={(e) => setContext(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Add task
        </button>
      </form>
      <Notice message={message} />
    </Section>
  );
}
