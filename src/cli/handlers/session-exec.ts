import { spawnSync } from 'node:child_process';
import { launch, shellQuote } from '../../live/launch.js';
import { projectDirOf } from '../../live/setup-files.js';
import { Tmux } from '../../live/tmux.js';
import type { CommandIo } from '../command-io.js';
import { Exit } from '../exit-codes.js';
import { troupeCommand } from '../self-command.js';

export interface SessionExecFlags {
  session?: string;
}

/**
 * `troupe session exec <agent> [-- args]` (AMQ's `coop exec`): one agent of the roster in this
 * terminal — the session's environment, its wake when in tmux, its CLI with the standing
 * instruction, resuming its recorded conversation — as the line `launch --launcher commands`
 * prints for it, run here. Exits with the CLI's exit code. The other agents' records are untouched.
 */
export async function sessionExec(
  agent: string,
  args: string[],
  flags: SessionExecFlags,
  io: CommandIo,
): Promise<number> {
  const result = launch({
    cwd: io.cwd,
    ...(flags.session ? { session: flags.session } : {}),
    launcher: 'commands',
    only: agent,
    tmux: new Tmux(),
    // the line starts with `cd <project>`: a relative path to troupe must be from there
    troupe: troupeCommand({ env: process.env, cwd: projectDirOf(io.cwd) }),
    env: process.env,
    startWake: () => {},
  });
  const line = result.agents[0]?.command;
  if (!line) {
    io.err(`troupe: ${agent} is disabled in .amq/launch.json (resume_policy: disabled)\n`);
    return Exit.usage;
  }
  // the operator's own arguments for this run, after the committed ones
  const extra = args.map(shellQuote).join(' ');
  const ran = spawnSync('bash', ['-c', extra ? `${line} ${extra}` : line], { stdio: 'inherit', cwd: io.cwd });
  return ran.status ?? Exit.failed;
}
