import { useEffect, useState } from 'react';
import { PipelinesPage } from './pipelines-page';
import { RegistryPage } from './registry-page';
import { Link, usePath } from './router';
import { TaskDetailPage } from './task-detail';
import { TaskListPage } from './task-list';
import { TeamPage } from './team-page';

export function App() {
  const path = usePath();
  const task = /^\/tasks\/([^/]+)$/.exec(path)?.[1];
  const pipeline = /^\/pipelines(?:\/([^/]+))?$/.exec(path);
  const team = path === '/team';
  const registry = path === '/registry';
  useEffect(() => {
    document.title = task
      ? `${decodeURIComponent(task)} · troupe`
      : pipeline
        ? 'pipelines · troupe'
        : team
          ? 'team · troupe'
          : registry
            ? 'registry · troupe'
            : 'troupe';
  }, [task, pipeline, team, registry]);
  return (
    <div className="shell">
      <header className="topbar">
        <Link to="/" className="brand">
          <span className="logo" aria-hidden="true" />
          troupe
        </Link>
        <nav>
          <Link to="/" className={!pipeline && !team && !registry ? 'active' : ''} testId="nav-tasks">
            Tasks
          </Link>
          <Link to="/pipelines" className={pipeline ? 'active' : ''} testId="nav-pipelines">
            Pipelines
          </Link>
          <Link to="/team" className={team ? 'active' : ''} testId="nav-team">
            Team
          </Link>
          <Link to="/registry" className={registry ? 'active' : ''} testId="nav-registry">
            Registry
          </Link>
        </nav>
        <ConnectionStatus />
      </header>
      <main>
        {task ? (
          <TaskDetailPage id={decodeURIComponent(task)} />
        ) : team ? (
          <TeamPage />
        ) : registry ? (
          <RegistryPage />
        ) : pipeline ? (
          <PipelinesPage selected={pipeline[1] ? decodeURIComponent(pipeline[1]) : null} />
        ) : (
          <TaskListPage />
        )}
      </main>
    </div>
  );
}

function ConnectionStatus() {
  const [online, setOnline] = useState(true);
  useEffect(() => {
    let alive = true;
    const check = () =>
      fetch('/api/health')
        .then((r) => alive && setOnline(r.ok))
        .catch(() => alive && setOnline(false));
    const timer = window.setInterval(check, 5000);
    return () => {
      alive = false;
      window.clearInterval(timer);
    };
  }, []);
  return (
    <span className={`conn ${online ? 'on' : 'off'}`} title={online ? 'connected' : 'server unreachable'}>
      {online ? 'live' : 'offline'}
    </span>
  );
}

/** Ticks every second, for elapsed times. */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), ms);
    return () => window.clearInterval(timer);
  }, [ms]);
  return now;
}
