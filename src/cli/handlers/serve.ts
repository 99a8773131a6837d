import { execa } from 'execa';
import { openProject, projectStoreLocation } from '../../app/project.js';
import { queueWorkers } from '../../app/queue-config.js';
import { UsageError } from '../../core/errors.js';
import { isLoopback, LoginLinks } from '../../server/auth.js';
import { startServer } from '../../server/serve.js';
import { projectToken } from '../../server/token-file.js';
import { WEBHOOK_SECRET_ENV, webhookSecrets } from '../../server/webhook-signature.js';
import { describeStore } from '../../store/store-url.js';
import type { CommandIo } from '../command-io.js';

export interface ServeFlags {
  port: string;
  host: string;
  open?: boolean;
  /** A value, false (`--no-token`), or unset or true (the project's own). */
  token?: string | boolean;
  adopt: boolean;
  queue: boolean;
  watch?: boolean;
}

export interface ServeSettings {
  port: number;
  host: string;
  open: boolean;
  /** none (`--no-token`), the one given (`--token T`, TROUPE_TOKEN), or the project's own. */
  token: { kind: 'none' } | { kind: 'given'; value: string } | { kind: 'project' };
  adopt: boolean;
  queue: boolean;
}

/** What `troupe serve` was asked for, checked: a usage error for a bad port, token or host. */
export function serveSettings(flags: ServeFlags, env: NodeJS.ProcessEnv): ServeSettings {
  const port = Number(flags.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port ${flags.port} is not a port`);
  if (flags.token === false && !isLoopback(flags.host))
    throw new UsageError(`--no-token is for the loopback only, not ${flags.host}`);
  const given = typeof flags.token === 'string' ? flags.token : (env.TROUPE_TOKEN ?? null);
  const token: ServeSettings['token'] =
    flags.token === false
      ? { kind: 'none' }
      : given !== null
        ? { kind: 'given', value: given }
        : { kind: 'project' };
  if (token.kind === 'given' && token.value.length < 16)
    throw new UsageError('a token must be at least 16 characters', {
      hint: 'leave --token out: serve makes one',
    });
  return { port, host: flags.host, open: flags.open === true, token, adopt: flags.adopt, queue: flags.queue };
}

/** `troupe serve`: the HTTP API and the dashboard, until SIGINT or SIGTERM. */
export async function serve(flags: ServeFlags, io: CommandIo): Promise<number> {
  const settings = serveSettings(flags, process.env);
  const project = openProject(io.cwd);
  const kept = settings.token.kind === 'project' ? projectToken(project.root) : null;
  const token =
    settings.token.kind === 'none'
      ? null
      : settings.token.kind === 'given'
        ? settings.token.value
        : kept!.token;
  const logins = new LoginLinks();
  const log = (line: string) => io.err(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
  const secrets = webhookSecrets(process.env);
  const server = await startServer({
    project,
    port: settings.port,
    host: settings.host,
    token,
    logins,
    log,
    adopt: settings.adopt,
    queue: settings.queue,
    watch: flags.watch === true,
    webhookSecrets: secrets,
  });
  // the token itself is never printed: a link that opens the dashboard once, and where the token is
  const link = token ? `${server.url}?login=${logins.issue()}` : server.url;
  io.out(`troupe serve: listening on ${server.url}\n`);
  io.out(`store: ${describeStore(projectStoreLocation(project.root, project.config))}\n`);
  io.out(
    server.runsOn === 'here'
      ? 'tasks: run in this process\n'
      : `tasks: handed to the work queue at ${server.runsOn.queue} (\`troupe worker\` runs them)\n`,
  );
  if (server.runsOn !== 'here') {
    const live = (await queueWorkers(project).catch(() => null))?.workers.filter((w) => !w.gone) ?? [];
    if (live.length === 0)
      log(
        'no worker is running: tasks wait in the queue until one starts (`troupe worker`), or serve with --no-queue',
      );
  }
  if (server.watching) {
    io.out(`watch: ${server.watching}; its tasks run in this process\n`);
    const on = Object.keys(secrets);
    io.out(
      on.length
        ? `webhooks: ${on.map((s) => `${server.url}api/trackers/webhook/${s}`).join(', ')}\n`
        : `webhooks: off (set ${Object.values(WEBHOOK_SECRET_ENV).join(' or ')})\n`,
    );
  }
  if (kept) io.out(`token: in ${kept.file} (Authorization: Bearer, or ?token=)\n`);
  if (!token) log('no token: any user of this machine can drive this server (--no-token)');
  io.out(`dashboard: ${link} (opens once)\n`);
  if (server.resumed.length) log(`resumed ${server.resumed.join(', ')}`);
  if (settings.open) openBrowser(link);

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
}

function openBrowser(url: string): void {
  const command =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  execa(command, [url], { detached: true, stdio: 'ignore', reject: false }).unref();
}
