import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import { action } from '../action.js';

interface ServeFlags {
  port: string;
  host: string;
  open?: boolean;
  /** A value, false (`--no-token`), or unset or true (the project's own). */
  token?: string | boolean;
  adopt: boolean;
  queue: boolean;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the HTTP API and the dashboard; runs submitted tasks in the background')
    .option('--port <n>', 'port (0: any free port)', '8000')
    .option('--host <address>', 'address to bind (default: the loopback only)', '127.0.0.1')
    .option(
      '--token [token]',
      "the token every request needs (also TROUPE_TOKEN; default: the project's own, kept where only you can read it)",
    )
    .option(
      '--no-token',
      'no token, on the loopback only: any user of this machine can then drive the server',
    )
    .option('--open', 'open the dashboard in a browser')
    .option('--no-adopt', 'do not carry on the tasks whose process is gone (killed, or its lease expired)')
    .option(
      '--no-queue',
      "run tasks in this process even when the project has a work queue (by default they go to the queue's workers)",
    )
    .action(
      action(async (flags: ServeFlags) => {
        const { openProject } = await import('../../app/project.js');
        const { startServer } = await import('../../server/serve.js');
        const { isLoopback, LoginLinks } = await import('../../server/auth.js');
        const port = Number(flags.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw new UsageError(`--port ${flags.port} is not a port`);
        if (flags.token === false && !isLoopback(flags.host))
          throw new UsageError(`--no-token is for the loopback only, not ${flags.host}`);
        const project = openProject();
        const { projectToken } = await import('../../server/token-file.js');
        const given = typeof flags.token === 'string' ? flags.token : (process.env.TROUPE_TOKEN ?? null);
        const kept = flags.token !== false && given === null ? projectToken(project.root) : null;
        const token = flags.token === false ? null : (given ?? kept!.token);
        if (token !== null && token.length < 16)
          throw new UsageError('a token must be at least 16 characters', {
            hint: 'leave --token out: serve makes one',
          });
        const logins = new LoginLinks();
        const { describeStore } = await import('../../store/store-url.js');
        const { projectStoreLocation } = await import('../../app/project.js');
        const log = (line: string) =>
          process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
        const server = await startServer({
          project,
          port,
          host: flags.host,
          token,
          logins,
          log,
          adopt: flags.adopt,
          queue: flags.queue,
        });
        // the token itself is never printed: a link that opens the dashboard once, and where the token is
        const link = token ? `${server.url}?login=${logins.issue()}` : server.url;
        process.stdout.write(`troupe serve: listening on ${server.url}\n`);
        process.stdout.write(`store: ${describeStore(projectStoreLocation(project.root, project.config))}\n`);
        process.stdout.write(
          server.runsOn === 'here'
            ? 'tasks: run in this process\n'
            : `tasks: handed to the work queue at ${server.runsOn.queue} (\`troupe worker\` runs them)\n`,
        );
        if (server.runsOn !== 'here') {
          const { queueWorkers } = await import('../../app/queue-config.js');
          const live = (await queueWorkers(project).catch(() => null))?.workers.filter((w) => !w.gone) ?? [];
          if (live.length === 0)
            log(
              'no worker is running: tasks wait in the queue until one starts (`troupe worker`), or serve with --no-queue',
            );
        }
        if (kept) process.stdout.write(`token: in ${kept.file} (Authorization: Bearer, or ?token=)\n`);
        if (!token) log('no token: any user of this machine can drive this server (--no-token)');
        process.stdout.write(`dashboard: ${link} (opens once)\n`);
        if (server.resumed.length) log(`resumed ${server.resumed.join(', ')}`);
        if (flags.open) await openBrowser(link);

        const signal = await new Promise<NodeJS.Signals>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        log(`${signal}: stopping`);
        // running stages are stopped where they are; the next `serve` or `troupe resume` runs them again
        const { idle } = await server.close(2000);
        if (!idle) log('some runs did not stop in time; they will be resumed');
        project.store.close();
        return 0;
      }),
    );
}

async function openBrowser(url: string): Promise<void> {
  const { execa } = await import('execa');
  const command =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  execa(command, [url], { detached: true, stdio: 'ignore', reject: false }).unref();
}
