import { join } from 'node:path';
import type { EventStore } from '../core/event-store.js';
import { TaskService } from '../engine/task-service.js';
import { loadProjectConfig, type ProjectConfig } from '../pipeline/config.js';
import { findProjectRoot } from '../pipeline/discover.js';
import type { ProviderTurns } from '../scheduler/provider-limiter.js';
import { advisoryMergeLock } from '../store/advisory-merge-lock.js';
import { openStore } from '../store/open-store.js';
import { parseStoreLocation, type StoreLocation } from '../store/store-url.js';
import { fileMergeLock } from '../workspace/merge-lock.js';
import { chosenStore } from './store-choice.js';
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
  const config = loadProjectConfig(root, (line) => process.stderr.write(`troupe: warning: ${line}\n`));
  const location = projectStoreLocation(root, config);
  const store = openStore(location);
  return { root, config, store, tasks: projectTaskService(root, store, config, undefined, location) };
}

/**
 * Where the project's tasks live: `--store` (store-choice.ts), else TROUPE_STORE, else `store:` in
 * .troupe/config.yaml, else SQLite in .troupe/troupe.db.
 */
export function projectStoreLocation(
  root: string,
  config: ProjectConfig,
  env: NodeJS.ProcessEnv = process.env,
): StoreLocation {
  const chosen = chosenStore() || env.TROUPE_STORE || config.store;
  return chosen
    ? parseStoreLocation(chosen, root)
    : { kind: 'sqlite', file: join(root, '.troupe', 'troupe.db') };
}

/** The task service of a project whose store is already open (a worker's: with the shared `limits:` caps). */
export function projectTaskService(
  root: string,
  store: EventStore,
  config: ProjectConfig,
  limiter?: ProviderTurns,
  // where `store` was opened from (troupe's MCP server opens it again): the project's choice
  location: StoreLocation = projectStoreLocation(root, config),
): TaskService {
  // merges into base one at a time: on this machine by a lock file, across machines by the store's lock
  const mergeLock = advisoryMergeLock(store, fileMergeLock(join(root, '.troupe', 'locks')));
  return new TaskService(root, store, config, projectAdapters(root, config, mergeLock, location), limiter);
}
