import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { LiveFlags } from '../handlers/live.js';

/**
 * Live co-op (docs/live.md): `launch` the roster's interactive CLIs, `session create|list|resume`,
 * and the per-agent `wake` that launch starts. Registration only: the handlers are in
 * handlers/live.ts, the work in src/live/.
 */
export function registerLive(program: Command): void {
  const load = () => import('../handlers/live.js');
  program
    .command('launch')
    .description('start every agent of .amq/launch.json in its CLI, on the bus, resuming its conversation')
    .option('--session <name>', 'session (default: the default_session of .amq/launch.json)')
    .option('--launcher <name>', 'auto | tmux | commands (print the commands to paste; exits 6)', 'auto')
    .option('--json', 'print JSON')
    .action(action(async (flags: LiveFlags) => (await load()).launchCommand(flags, processIo())));

  const session = program.command('session').description('bus sessions: create, list, resume');
  session
    .command('create <name>')
    .description('create a session (its mailboxes for the roster and user)')
    .option('--json', 'print JSON')
    .action(
      action(async (name: string, flags: LiveFlags) =>
        (await load()).sessionCreate(name, flags, processIo()),
      ),
    );
  session
    .command('list')
    .description('sessions, their agents and recorded conversation ids')
    .option('--json', 'print JSON')
    .action(action(async (flags: LiveFlags) => (await load()).sessionList(flags, processIo())));
  session
    .command('resume <name>')
    .description("launch a session again, resuming each agent's recorded conversation")
    .option('--launcher <name>', 'auto | tmux | commands', 'auto')
    .option('--json', 'print JSON')
    .action(
      action(async (name: string, flags: LiveFlags) =>
        (await load()).launchCommand({ ...flags, session: name }, processIo()),
      ),
    );

  program
    .command('wake')
    .description("type a notice into an agent's tmux pane when mail comes (one per agent; launch starts it)")
    .option('--me <handle>', 'whose inbox (else AM_ME)')
    .option('--root <dir>', 'mailbox root (else AM_ROOT, .amqrc, ...)')
    .option('--pane <id>', 'tmux pane of the agent (else $TMUX_PANE)')
    .option('--retry <duration>', 'first doorbell retry for an unanswered notice', '5s')
    .option('--poll', 'poll instead of file-system events')
    .option('--replace', 'stop a running wake of this agent and take over')
    .option('--detach', 'run in the background and return')
    .action(action(async (flags: LiveFlags) => (await load()).wakeCommand(flags, processIo())));
}
