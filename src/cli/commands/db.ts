import type { Command } from 'commander';
import { action } from '../action.js';
import { Exit } from '../exit-codes.js';

export function registerDb(program: Command): void {
  const db = program.command('db').description("the store's schema: where it is, its migrations");
  db.command('migrate')
    .description('apply the schema migrations this troupe needs (each once; safe to run again)')
    .option('--json', 'print JSON: {applied: [versions]}')
    .action(
      action(async (options: { json?: boolean }) => {
        const { migrateDatabase } = await import('../../store/database-admin.js');
        const { printJson } = await import('../options.js');
        const applied = migrateDatabase(await configuredLocation());
        if (options.json) printJson({ applied });
        else
          process.stdout.write(
            applied.length
              ? `applied migration${applied.length > 1 ? 's' : ''} ${applied.join(', ')}\n`
              : 'up to date: nothing to apply\n',
          );
        return 0;
      }),
    );
  db.command('status')
    .description('where the store is and which migrations it has')
    .option(
      '--json',
      'print JSON: {kind, url | path, client, migrations, pending, version, known} (no password)',
    )
    .addHelpText(
      'after',
      `
Exit codes (a rollout can gate on them): 0 up to date; ${Exit.failed} migrations pending (PostgreSQL: run
\`troupe db migrate\`); ${Exit.storeTooNew} the schema is newer than this troupe knows (upgrade troupe).`,
    )
    .action(
      action(async (options: { json?: boolean }) => {
        const { databaseStatus } = await import('../../store/database-admin.js');
        const { printJson } = await import('../options.js');
        const status = databaseStatus(await configuredLocation());
        if (options.json) printJson(status);
        else printStatus(status);
        const { refuseNewerSchema } = await import('../../store/schema-version.js');
        const where = status.kind === 'sqlite' ? status.path : status.url;
        refuseNewerSchema(
          status.kind === 'sqlite' ? (status.userVersion ?? 0) : status.version,
          status.known,
          where,
        );
        return status.kind === 'postgres' && status.pending.length ? Exit.failed : Exit.ok;
      }),
    );
  db.command('prune')
    .description(
      'delete the finished tasks (completed, failed, cancelled) whose last event is older than --older-than, with their events and leases',
    )
    .requiredOption('--older-than <age>', 'how long since the last event: 30d, 12h, 1d12h, 90m')
    .option('--dry-run', 'list the tasks that would be deleted, and delete nothing')
    .option('--json', 'print JSON: {before, dryRun, count, tasks: [{id, status, pipeline, updated}]}')
    .addHelpText('after', '\nUnfinished tasks are never deleted, however old.')
    .action(
      action(async (options: { olderThan: string; dryRun?: boolean; json?: boolean }) => {
        const { parseAge } = await import('../age.js');
        const before = new Date(Date.now() - parseAge(options.olderThan, '--older-than')).toISOString();
        const { pruneTasks } = await import('../../store/prune.js');
        const { printJson } = await import('../options.js');
        const dryRun = options.dryRun === true;
        const tasks = pruneTasks(await configuredLocation(), { before, dryRun });
        if (options.json) {
          printJson({ before, dryRun, count: tasks.length, tasks });
          return Exit.ok;
        }
        if (dryRun)
          for (const task of tasks)
            process.stdout.write(
              `${task.id}  ${task.status}  ${task.pipeline}  last event ${task.updated}\n`,
            );
        const count = `${tasks.length} finished task${tasks.length === 1 ? '' : 's'}`;
        process.stdout.write(
          `${dryRun ? `would delete ${count}` : `deleted ${count}`} (last event before ${before})\n`,
        );
        return Exit.ok;
      }),
    );
}

type Status = ReturnType<typeof import('../../store/database-admin.js').databaseStatus>;

function printStatus(status: Status): void {
  if (status.kind === 'sqlite') {
    process.stdout.write(
      `sqlite ${status.path}\n${status.exists ? `user_version ${status.userVersion}` : 'not created yet'}\n`,
    );
    return;
  }
  process.stdout.write(
    `postgres ${status.url}${status.schema ? ` (schema ${status.schema})` : ''}, client ${status.client === 'native' ? 'libpq' : 'the bridge (pg in a worker thread)'}\n`,
  );
  for (const m of status.migrations)
    process.stdout.write(`  ${m.version} ${m.name}: ${m.appliedAt ? `applied ${m.appliedAt}` : 'pending'}\n`);
  if (status.pending.length) process.stdout.write('run `troupe db migrate` to apply the pending ones\n');
}

async function configuredLocation() {
  const { findProjectRoot } = await import('../../pipeline/discover.js');
  const { loadProjectConfig } = await import('../../pipeline/config.js');
  const { projectStoreLocation } = await import('../../app/project.js');
  const root = findProjectRoot(process.cwd());
  return projectStoreLocation(root, loadProjectConfig(root));
}
