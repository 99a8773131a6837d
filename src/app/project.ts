import { join } from 'node:path';
import { TaskService } from '../engine/task-service.js';
import { loadProjectConfig, type ProjectConfig } from '../pipeline/config.js';
import { findProjectRoot } from '../pipeline/discover.js';
import type { EventStore } from '../core/event-store.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';

/** The project a command works in: its root, config, store and task service. */
export interface Project {
  root: string;
  config: ProjectConfig;
  store: EventStore;
  tasks: TaskService;
}

export function openProject(cwd = process.cwd()): Project {
  const root = findProjectRoot(cwd);
  const config = loadProjectConfig(root);
  const store = openSqliteStore(join(root, '.troupe', 'troupe.db'));
  return { root, config, store, tasks: new TaskService(root, store, config) };
}
