import { useEffect, useState } from 'react';
import { api, type WorkerList } from './api';
import { ago } from './format';

/** How often the workers are read again: they report every few seconds, not through the event log. */
const POLL_MS = 5000;

/** The workers on the work queue (`troupe workers`): runtimes, what each runs, when last seen. */
export function WorkersSection({ now }: { now: number }) {
  const [list, setList] = useState<WorkerList | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let alive = true;
    const load = () =>
      api
        .workers()
        .then((l) => {
          if (!alive) return;
          setList(l);
          setError(null);
        })
        .catch((e: Error) => alive && setError(e.message));
    load();
    const timer = window.setInterval(load, POLL_MS);
    return () => {
      alive = false;
      window.clearInterval(timer);
    };
  }, []);

  return (
    <section className="card" data-testid="workers">
      <div className="toolbar">
        <h2>Workers</h2>
        <span className="spacer" />
        {list?.queue && <span className="muted mono small">{list.queue}</span>}
      </div>
      {error && <p className="error-text">{error}</p>}
      {list && !list.queue && (
        <p className="empty">
          No work queue: tasks run in the process that starts them (docs/distributed.md).
        </p>
      )}
      {list?.queue && list.workers.length === 0 && <p className="empty">No workers on the queue.</p>}
      {list && list.workers.length > 0 && (
        <table className="tasks">
          <thead>
            <tr>
              <th>Worker</th>
              <th>Presence</th>
              <th>Runtimes</th>
              <th className="wide">Running</th>
              <th className="num">Last seen</th>
            </tr>
          </thead>
          <tbody>
            {list.workers.map((w) => {
              const presence = w.gone ? 'offline' : w.tasks.length ? 'active' : 'idle';
              return (
                <tr key={w.id} data-testid={`worker-${w.id}`} data-presence={presence}>
                  <td className="mono">
                    {w.id}
                    {w.labels.length > 0 && <span className="muted"> [{w.labels.join(', ')}]</span>}
                  </td>
                  <td>
                    <span className={`badge presence-${presence}`}>{w.gone ? 'gone' : presence}</span>
                  </td>
                  <td>{w.runtimes.join(', ')}</td>
                  <td className="wide ellipsis mono">{w.tasks.join(', ') || '—'}</td>
                  <td className="num">{ago(w.last_seen, now)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
