import { useEffect, useState } from 'react';
import { api, type QueueSummary, type WorkerList } from './api';
import { ago } from './format';

/** How often the workers are read again: they report every few seconds, not through the event log. */
const POLL_MS = 5000;

/**
 * The work queue (`troupe queue`): a line per lane, then its workers (`troupe workers`): version,
 * runtimes, what each runs, stages run and takeovers, when last seen.
 */
export function WorkersSection({ now }: { now: number }) {
  const [list, setList] = useState<WorkerList | null>(null);
  const [queue, setQueue] = useState<QueueSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let alive = true;
    const load = () =>
      Promise.all([api.workers(), api.queue()])
        .then(([l, q]) => {
          if (!alive) return;
          setList(l);
          setQueue(q);
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
      {queue && queue.lanes.length > 0 && <LaneTable queue={queue} />}
      {list?.queue && list.workers.length === 0 && <p className="empty">No workers on the queue.</p>}
      {list && list.workers.length > 0 && (
        <table className="tasks">
          <thead>
            <tr>
              <th>Worker</th>
              <th>Presence</th>
              <th>Version</th>
              <th>Runtimes</th>
              <th className="wide">Running</th>
              <th className="num">Stages</th>
              <th className="num" title="tasks taken over from a worker that never handed them back">
                Takeovers
              </th>
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
                  <td className="mono">{w.version ?? '—'}</td>
                  <td>{w.runtimes.join(', ')}</td>
                  <td className="wide ellipsis mono">{w.tasks.join(', ') || '—'}</td>
                  <td className="num">{w.stages}</td>
                  <td className="num" data-testid="takeovers">
                    {w.takeovers}
                    {w.lease_losses > 0 && <span className="muted"> ({w.lease_losses} lost)</span>}
                  </td>
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

/** A row per lane: backlog, the oldest due wake-up's wait, active jobs (and those no live worker holds), retries, failures. */
function LaneTable({ queue }: { queue: QueueSummary }) {
  return (
    <table className="tasks" data-testid="queue-lanes">
      <thead>
        <tr>
          <th>Lane</th>
          <th className="num">Backlog</th>
          <th className="num">Oldest waiting</th>
          <th className="num">Active</th>
          <th className="num">Retrying</th>
          <th className="num">Failed</th>
        </tr>
      </thead>
      <tbody>
        {queue.lanes.map((lane) => {
          const unheld = queue.active.filter((job) => job.lane === lane.lane && job.holder === null).length;
          return (
            <tr key={lane.lane} data-testid={`lane-${lane.lane}`} data-paused={lane.paused}>
              <td className="mono">
                {lane.lane}
                {lane.paused && <span className="badge presence-offline"> paused</span>}
              </td>
              <td className="num">
                {lane.backlog}
                {lane.due !== lane.backlog && <span className="muted"> ({lane.due} due)</span>}
              </td>
              <td className="num">
                {lane.oldest_wait_seconds === null ? '—' : `${lane.oldest_wait_seconds}s`}
              </td>
              <td className="num">
                {lane.active}
                {unheld > 0 && <span className="error-text"> ({unheld} without a live worker)</span>}
              </td>
              <td className="num">{lane.retrying}</td>
              <td className="num">{lane.failed}</td>
            </tr>
          );
        })}
      </tbody>
      {queue.dead_letters > 0 && (
        <caption className="error-text">
          {queue.dead_letters} dead letter{queue.dead_letters === 1 ? '' : 's'}: see `troupe list --dead`
        </caption>
      )}
    </table>
  );
}
