import type { Command } from 'commander';
import { action } from '../action.js';

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
    .option('--json', 'print JSON: {kind, url | path, client, migrations, pending} (no password)')
    .action(
      action(async (options: { json?: boolean }) => {
        const { databaseStatus } = await import('../../store/database-admin.js');
        const { printJson } = await import('../options.js');
        const status = databaseStatus(await configuredLocation());
        if (options.json) {
          printJson(status);
          return 0;
        }
        if (status.kind === 'sqlite') {
          process.stdout.write(
            `sqlite ${status.path}\n${status.exists ? `user_version ${status.userVersion}` : 'not created yet'}\n`,
          );
          return 0;
        }
        process.stdout.write(
          `postgres ${status.url}${status.schema ? ` (schema ${status.schema})` : ''}, client ${status.client === 'native' ? 'libpq' : 'the bridge (pg in a worker thread)'}\n`,
        );
        for (const m of status.migrations)
          process.stdout.write(
            `  ${m.version} ${m.name}: ${m.appliedAt ? `applied ${m.appliedAt}` : 'pending'}\n`,
          );
        if (status.pending.length)
          process.stdout.write('run `troupe db migrate` to apply the pending ones\n');
        return 0;
      }),
    );
}

async function configuredLocation() {
  const { findProjectRoot } = await import('../../pipeline/discover.js');
  const { loadProjectConfig } = await import('../../pipeline/config.js');
  const { projectStoreLocation } = await import('../../app/project.js');
  const root = findProjectRoot(process.cwd());
  return projectStoreLocation(root, loadProjectConfig(root));
}
