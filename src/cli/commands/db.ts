import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import { Exit } from '../exit-codes.js';
import type { PruneOptions } from '../handlers/db.js';

export function registerDb(program: Command): void {
  const load = () => import('../handlers/db.js');
  const db = program.command('db').description("the store's schema: where it is, its migrations");
  db.command('migrate')
    .description('apply the schema migrations this troupe needs (each once; safe to run again)')
    .option('--json', 'print JSON: {applied: [versions]}')
    .action(action(async (options: { json?: boolean }) => (await load()).migrate(options, processIo())));
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
    .action(action(async (options: { json?: boolean }) => (await load()).status(options, processIo())));
  db.command('prune')
    .description(
      'delete the finished tasks (completed, failed, cancelled) whose last event is older than --older-than, with their events and leases',
    )
    .requiredOption('--older-than <age>', 'how long since the last event: 30d, 12h, 1d12h, 90m')
    .option('--dry-run', 'list the tasks that would be deleted, and delete nothing')
    .option('--json', 'print JSON: {before, dryRun, count, tasks: [{id, status, pipeline, updated}]}')
    .addHelpText('after', '\nUnfinished tasks are never deleted, however old.')
    .action(action(async (options: PruneOptions) => (await load()).prune(options, processIo())));
}
