import { join } from 'node:path';
import type { EventStore } from '../core/event-store.js';
import { TaskService } from '../engine/task-service.js';
import { loadProjectConfig, type ProjectConfig } from '../pipeline/config.js';
import { findProjectRoot } from '../pipeline/discover.js';
import type { ProviderTurns } from '../scheduler/provider-limiter.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { projectAdapters } from './task-adapters.js';

/**
 * The composition root: which store, which workspace, which bus. The CLI and the server both
 * open a project here, so they run tasks the same way.
 */
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
  return { root, config, store, tasks: projectTaskService(root, store, config) };
}

/** The task service of a project whose store is already open (a worker's: with the shared `limits:` caps). */
export function projectTaskService(
  root: string,
  store: EventStore,
  config: ProjectConfig,
  limiter?: ProviderTurns,
): TaskService {
  return new TaskService(root, store, config, projectAdapters(root, config), limiter);
}
