import type { Command } from 'commander';
import { action } from '../action.js';

interface LiveFlags {
  json?: boolean;
  session?: string;
  launcher?: string;
  me?: string;
  root?: string;
  pane?: string;
  retry?: string;
  poll?: boolean;
  replace?: boolean;
  detach?: boolean;
}

/**
 * Live co-op (docs/live.md): `launch` the roster's interactive CLIs, `session create|list|resume`,
 * and the per-agent `wake` that launch starts. Registration only; the work is in src/live/.
 */
export function registerLive(program: Command): void {
  const load = () => import('./live-actions.js');
  program
    .command('launch')
    .description('start every agent of .amq/launch.json in its CLI, on the bus, resuming its conversation')
    .option('--session <name>', 'session (default: the default_session of .amq/launch.json)')
    .option('--launcher <name>', 'auto | tmux | commands (print the commands to paste; exits 6)', 'auto')
    .option('--json', 'print JSON')
    .action(action(async (flags: LiveFlags) => (await load()).launchCommand(flags)));

  const session = program.command('session').description('bus sessions: create, list, resume');
  session
    .command('create <name>')
    .description('create a session (its mailboxes for the roster and user)')
    .option('--json', 'print JSON')
    .action(action(async (name: string, flags: LiveFlags) => (await load()).sessionCreate(name, flags)));
  session
    .command('list')
    .description('sessions, their agents and recorded conversation ids')
    .option('--json', 'print JSON')
    .action(action(async (flags: LiveFlags) => (await load()).sessionList(flags)));
  session
    .command('resume <name>')
    .description("launch a session again, resuming each agent's recorded conversation")
    .option('--launcher <name>', 'auto | tmux | commands', 'auto')
    .option('--json', 'print JSON')
    .action(
      action(async (name: string, flags: LiveFlags) =>
        (await load()).launchCommand({ ...flags, session: name }),
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
    .action(action(async (flags: LiveFlags) => (await load()).wakeCommand(flags)));
}

export type { LiveFlags };
