import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import { action } from '../action.js';

interface ServeFlags {
  port: string;
  host: string;
  open?: boolean;
  token?: string | boolean;
  adopt: boolean;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the HTTP API and the dashboard; runs submitted tasks in the background')
    .option('--port <n>', 'port (0: any free port)', '8000')
    .option('--host <address>', 'address to bind; anything but the loopback needs a token', '127.0.0.1')
    .option(
      '--token [token]',
      'require this token on every request (generated when no value; also TROUPE_TOKEN)',
    )
    .option('--open', 'open the dashboard in a browser')
    .option('--no-adopt', 'do not carry on the tasks whose process is gone (killed, or its lease expired)')
    .action(
      action(async (flags: ServeFlags) => {
        const { openProject } = await import('../../app/project.js');
        const { startServer } = await import('../../server/serve.js');
        const { generateToken, isLoopback } = await import('../../server/auth.js');
        const port = Number(flags.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw new UsageError(`--port ${flags.port} is not a port`);
        let token = typeof flags.token === 'string' ? flags.token : (process.env.TROUPE_TOKEN ?? null);
        if (flags.token === true || (!token && !isLoopback(flags.host))) token = generateToken();
        const project = openProject();
        const { describeStore } = await import('../../store/store-url.js');
        const { projectStoreLocation } = await import('../../app/project.js');
        const log = (line: string) =>
          process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
        const server = await startServer({ project, port, host: flags.host, token, log, adopt: flags.adopt });
        const link = token ? `${server.url}?token=${encodeURIComponent(token)}` : server.url;
        process.stdout.write(`troupe serve: listening on ${server.url}\n`);
        process.stdout.write(`store: ${describeStore(projectStoreLocation(project.root, project.config))}\n`);
        if (token && typeof flags.token !== 'string' && !process.env.TROUPE_TOKEN)
          process.stdout.write(`token: ${token}\n`);
        process.stdout.write(`dashboard: ${link}\n`);
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
