import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { ServeFlags } from '../handlers/serve.js';

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
    .option(
      '--watch',
      "also run `troupe watch` here: take work from the project's tracker; its signed webhooks poll at once (docs/trackers.md)",
    )
    .action(
      action(async (flags: ServeFlags) => {
        const { serve } = await import('../handlers/serve.js');
        return serve(flags, processIo());
      }),
    );
}
