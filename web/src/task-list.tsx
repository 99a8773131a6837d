import { useCallback, useEffect, useState } from 'react';
import { isTerminal, TASK_STATUSES } from '../../src/core/events';
import { api, type Status, type TaskRow } from './api';
import { useNow } from './app';
import { ago, cost, elapsed, STATUS_LABEL, tokens } from './format';
import { IssueChip } from './issue-chip';
import { useEventStream, useThrottled } from './live';
import { Link, navigate } from './router';
import { RunForm } from './run-form';

const FILTERS: { label: string; status: Status[] | null }[] = [
  { label: 'All', status: null },
  // every status but an end: a task waiting for a person or a provider is active too
  { label: 'Active', status: TASK_STATUSES.filter((s) => !isTerminal(s)) },
  { label: 'Completed', status: ['completed'] },
  { label: 'Failed', status: ['failed'] },
  // its runs kept failing: it waits for a person's Resume
  { label: 'Parked', status: ['parked'] },
  { label: 'Cancelled', status: ['cancelled'] },
];

/** Every task, live; the ones waiting for a person first. */
export function TaskListPage() {
  const [filter, setFilter] = useState(0);
  const [pipeline, setPipeline] = useState('');
  const [tasks, setTasks] = useState<TaskRow[] | null>(null);
  const [waiting, setWaiting] = useState<TaskRow[]>([]);
  const [error, setError] = useState<string | null>(null);
  const now = useNow();

  const load = useCallback(() => {
    const status = FILTERS[filter]?.status;
    const query = new URLSearchParams({ limit: '100' });
    if (status) query.set('status', status.join(','));
    if (pipeline) query.set('pipeline', pipeline);
    Promise.all([api.tasks(query.toString()), api.tasks('waiting=true&limit=100')])
      .then(([all, waits]) => {
        setTasks(all.tasks);
        setWaiting(waits.tasks);
        setError(null);
      })
      .catch((e: Error) => setError(e.message));
  }, [filter, pipeline]);
  useEffect(load, [load]);
  const refresh = useThrottled(load, 300);
  // any event but streamed text may change a row: the rows come from the server's view of each task
  useEventStream('/api/events', (event) => {
    if (event.type !== 'stage_output') refresh();
  });

  const pipelines = [...new Set((tasks ?? []).map((t) => t.pipeline))].sort();
  // a task waiting for a person is in the cards above and in its place in the table
  const rows = tasks ?? [];

  return (
    <div className="page">
      <RunForm />
      {waiting.length > 0 && (
        <section className="waiting" data-testid="waiting-list">
          <h2>
            Waiting for you <span className="count">{waiting.length}</span>
          </h2>
          <div className="waiting-cards">
            {waiting.map((t) => (
              <Link key={t.id} to={`/tasks/${t.id}`} className="waiting-card" testId={`waiting-${t.id}`}>
                <div className="waiting-head">
                  <span className={`badge ${t.status}`}>{STATUS_LABEL[t.status]}</span>
                  <span className="mono">{t.id}</span>
                  <span className="muted">{ago(t.updated, now)}</span>
                </div>
                <div className="waiting-input">
                  {t.issue && <IssueChip issue={t.issue} linked={false} />} {t.input}
                </div>
                <div className="waiting-ask">
                  <strong>{t.waiting?.agent}</strong>{' '}
                  {t.waiting?.kind === 'gate'
                    ? 'asks for approval of its output'
                    : `asks: ${t.waiting?.questions.join(' / ')}`}
                </div>
              </Link>
            ))}
          </div>
        </section>
      )}
      <section className="card">
        <div className="toolbar">
          <h2>Tasks</h2>
          <div className="chips" role="tablist">
            {FILTERS.map((f, i) => (
              <button
                key={f.label}
                type="button"
                className={`chip ${i === filter ? 'on' : ''}`}
                onClick={() => setFilter(i)}
              >
                {f.label}
              </button>
            ))}
          </div>
          <select value={pipeline} onChange={(e) => setPipeline(e.target.value)} aria-label="pipeline">
            <option value="">all pipelines</option>
            {pipelines.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </div>
        {error && <p className="error-text">{error}</p>}
        {tasks && rows.length === 0 && <p className="empty">No tasks yet. Start one above.</p>}
        {rows.length > 0 && (
          <table className="tasks" data-testid="task-table">
            <thead>
              <tr>
                <th>Task</th>
                <th>Status</th>
                <th>Pipeline</th>
                <th className="wide">Input</th>
                <th>Agent</th>
                <th className="num">Stages</th>
                <th className="num">Elapsed</th>
                <th className="num">Tokens</th>
                <th className="num">Cost</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((t) => (
                <tr key={t.id} onClick={() => navigate(`/tasks/${t.id}`)} data-testid={`task-row-${t.id}`}>
                  <td className="mono">
                    <Link to={`/tasks/${t.id}`}>{t.id}</Link>
                  </td>
                  <td>
                    <span className={`badge ${t.status}`} data-testid="task-status">
                      {STATUS_LABEL[t.status]}
                    </span>
                  </td>
                  <td>{t.pipeline}</td>
                  <td className="wide ellipsis" title={t.input}>
                    {t.issue && <IssueChip issue={t.issue} />} {t.input}
                  </td>
                  <td>
                    {t.running_agents.join(', ') || (t.status === 'completed' ? '' : (t.current_agent ?? ''))}
                    {t.no_worker && (
                      <span className="error-text small" data-testid="no-worker">
                        {' '}
                        not taken: {t.no_worker}
                      </span>
                    )}
                  </td>
                  <td className="num">{t.stage_count}</td>
                  <td className="num">{elapsed(t.created, t.updated, t.status, now)}</td>
                  <td className="num">{tokens(t.usage)}</td>
                  <td className="num">{cost(t.usage)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
