import { projectStoreLocation } from '../../app/project.js';
import { loadProjectConfig } from '../../pipeline/config.js';
import { findProjectRoot } from '../../pipeline/discover.js';
import { databaseStatus, migrateDatabase } from '../../store/database-admin.js';
import { pruneTasks } from '../../store/prune.js';
import { refuseNewerSchema } from '../../store/schema-version.js';
import type { StoreLocation } from '../../store/store-url.js';
import { parseAge } from '../age.js';
import { type CommandIo, writeJson } from '../command-io.js';
import { Exit } from '../exit-codes.js';

/** `troupe db migrate`: applies the migrations the store lacks. */
export async function migrate(options: { json?: boolean }, io: CommandIo): Promise<number> {
  const applied = migrateDatabase(configuredLocation(io));
  if (options.json) writeJson(io, { applied });
  else
    io.out(
      applied.length
        ? `applied migration${applied.length > 1 ? 's' : ''} ${applied.join(', ')}\n`
        : 'up to date: nothing to apply\n',
    );
  return Exit.ok;
}

/** `troupe db status`: where the store is and its migrations; the exit code says whether it is up to date. */
export async function status(options: { json?: boolean }, io: CommandIo): Promise<number> {
  const status = databaseStatus(configuredLocation(io));
  if (options.json) writeJson(io, status);
  else printStatus(status, io);
  const where = status.kind === 'sqlite' ? status.path : status.url;
  refuseNewerSchema(
    status.kind === 'sqlite' ? (status.userVersion ?? 0) : status.version,
    status.known,
    where,
  );
  return status.kind === 'postgres' && status.pending.length ? Exit.failed : Exit.ok;
}

export interface PruneOptions {
  olderThan: string;
  dryRun?: boolean;
  json?: boolean;
}

/** `troupe db prune`: deletes (or, dry run, lists) the finished tasks last touched before --older-than. */
export async function prune(options: PruneOptions, io: CommandIo): Promise<number> {
  const before = new Date(Date.now() - parseAge(options.olderThan, '--older-than')).toISOString();
  const dryRun = options.dryRun === true;
  const tasks = pruneTasks(configuredLocation(io), { before, dryRun });
  if (options.json) {
    writeJson(io, { before, dryRun, count: tasks.length, tasks });
    return Exit.ok;
  }
  if (dryRun)
    for (const task of tasks)
      io.out(`${task.id}  ${task.status}  ${task.pipeline}  last event ${task.updated}\n`);
  const count = `${tasks.length} finished task${tasks.length === 1 ? '' : 's'}`;
  io.out(`${dryRun ? `would delete ${count}` : `deleted ${count}`} (last event before ${before})\n`);
  return Exit.ok;
}

function printStatus(status: ReturnType<typeof databaseStatus>, io: CommandIo): void {
  if (status.kind === 'sqlite') {
    io.out(
      `sqlite ${status.path}\n${status.exists ? `user_version ${status.userVersion}` : 'not created yet'}\n`,
    );
    return;
  }
  io.out(
    `postgres ${status.url}${status.schema ? ` (schema ${status.schema})` : ''}, client ${status.client === 'native' ? 'libpq' : 'the bridge (pg in a worker thread)'}\n`,
  );
  for (const m of status.migrations)
    io.out(`  ${m.version} ${m.name}: ${m.appliedAt ? `applied ${m.appliedAt}` : 'pending'}\n`);
  if (status.pending.length) io.out('run `troupe db migrate` to apply the pending ones\n');
}

/** The project's store, without opening it (the commands here look at its schema themselves). */
function configuredLocation(io: CommandIo): StoreLocation {
  const root = findProjectRoot(io.cwd);
  return projectStoreLocation(root, loadProjectConfig(root));
}
