import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { LiveFlags } from '../handlers/live.js';
import type { WakeOpsFlags } from '../handlers/wake.js';

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
    .option(
      '--launcher <name>',
      'auto | cmux | ghostty | tmux | commands (print the commands to paste; exits 6)',
      'auto',
    )
    .option(
      '--plan',
      'print what would be launched and its digest; change nothing (no intent file: the plan is .amq/launch.json)',
    )
    .option('--prepare', 'write the plan with its digest and a recovery journal (apply it with --apply)')
    .option('--apply [file]', 'carry out the prepared plan (exit 6 if it changed); continues after a crash')
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
    .option('--launcher <name>', 'auto | cmux | ghostty | tmux | commands', 'auto')
    .option('--json', 'print JSON')
    .action(
      action(async (name: string, flags: LiveFlags) =>
        (await load()).launchCommand({ ...flags, session: name }, processIo()),
      ),
    );

  session
    .command('exec <agent> [args...]')
    .description(
      "run one agent here, in this terminal: the session's env, its wake (in tmux), its CLI (AMQ's coop exec)",
    )
    .option('--session <name>', 'session (default: the default_session of .amq/launch.json)')
    .action(
      action(async (agent: string, args: string[], flags: { session?: string }) =>
        (await import('../handlers/session-exec.js')).sessionExec(agent, args, flags, processIo()),
      ),
    );

  const wake = program
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
  registerWakeOps(wake);
}

/** AMQ's wake lifecycle: `wake check | repair | recover-owner | retire` (handlers/wake.ts). */
function registerWakeOps(wake: Command): void {
  const load = () => import('../handlers/wake.js');
  const verb = (name: string, description: string) =>
    wake
      .command(name)
      .description(description)
      .option('--me <handle>', 'whose wake (else AM_ME)')
      .option('--root <dir>', 'mailbox root (else AM_ROOT, .amqrc, ...)')
      .option('--session <name>', 'the session of the base root (instead of --root)')
      .option('--json', 'print JSON');
  verb('check', "read-only: the wake's state, who may act on it, and the exact next command")
    .option('--json-schema <n>', '1 (default) or 2: the closed action/actor/reason form (needs --json)')
    .action(action(async (flags: WakeOpsFlags) => (await load()).wakeCheck(flags, processIo())));
  verb('repair', "start a new wake in a dead wake's pane; it announces the mail that came meanwhile").action(
    action(async (flags: WakeOpsFlags) => (await load()).wakeRepair(flags, processIo())),
  );
  verb(
    'recover-owner',
    "release the wake lock: a dead owner's outright, a live one only from its own pane",
  ).action(action(async (flags: WakeOpsFlags) => (await load()).wakeRecoverOwner(flags, processIo())));
  verb('retire', 'stop an identity-confirmed live wake (or remove a stale lock); refused otherwise (exit 6)')
    .option('--pane <id>', "refuse unless the wake's pane is this one")
    .action(action(async (flags: WakeOpsFlags) => (await load()).wakeRetire(flags, processIo())));
}
