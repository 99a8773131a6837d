import { existsSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { loadAmqrc } from '../../../bus/amqrc.js';
import { openBus } from '../../../bus/bus.js';
import { parseHandle } from '../../../bus/handle.js';
import { readConfig } from '../../../bus/layout.js';
import { gitTop } from '../../../bus/root.js';
import { messageOf, StateError } from '../../../core/errors.js';
import type { CommandIo } from '../../command-io.js';
import { Exit } from '../../exit-codes.js';
import { troupeCommand } from '../../self-command.js';
import { type BusFlags, printJson, splitList, warn } from './context.js';
import { ignoreInGit } from './operations.js';

const DEFAULT_ROOT = '.agent-mail';
const DEFAULT_AGENTS = 'claude,codex';

/**
 * AMQ's `coop init`: the plain local bootstrap at the Git top (else here) — the root with a mailbox
 * for each agent, an `.amqrc` naming it, both kept out of git. `bus setup` is the onboarding flow
 * (roster, sessions, launch); this only makes the mailboxes findable from every shell.
 */
export async function coopInit(flags: BusFlags, io: CommandIo): Promise<number> {
  const top = gitTop(io.cwd) ?? io.cwd;
  const given = flags.root ?? DEFAULT_ROOT;
  const root = resolve(top, given);
  const agents = [
    ...new Set(splitList(flags.agents ?? DEFAULT_AGENTS).map((a) => parseHandle(a, '--agents'))),
  ].sort();
  const amqrcFile = join(top, '.amqrc');
  const amqrcThere = existsSync(amqrcFile);
  if (amqrcThere) {
    try {
      const existing = loadAmqrc(amqrcFile);
      if (existing.root !== root && !flags.force)
        throw new StateError(`${amqrcFile} already names root ${existing.root}`, {
          hint: 'pass --force to overwrite it',
        });
    } catch (error) {
      if (error instanceof StateError) throw error;
      if (!flags.force)
        throw new StateError(`invalid ${amqrcFile}: ${messageOf(error)}`, {
          hint: 'pass --force to overwrite it',
        });
      warn(io, `invalid ${amqrcFile}: ${messageOf(error)} (overwriting with --force)`);
    }
  }
  // a config already there is kept (AMQ's): its agents stand unless --force
  const configured = readConfig(root);
  const keep = configured && !flags.force;
  openBus(root).init(keep ? configured.agents : agents, flags.force === true);
  const rootInAmqrc = isAbsolute(given) ? given : relative(top, root) || '.';
  const amqrcWritten = !amqrcThere || flags.force === true;
  if (amqrcWritten)
    writeFileSync(amqrcFile, `${JSON.stringify({ root: rootInAmqrc }, null, 2)}\n`, { mode: 0o644 });
  const gitignoreUpdated = !isAbsolute(given) && root.startsWith(`${top}/`) && ignoreInGit(top, rootInAmqrc);
  const result = {
    root,
    agents: keep ? configured.agents : agents,
    amqrc_written: amqrcWritten,
    config_written: !keep,
    gitignore_updated: gitignoreUpdated,
  };
  if (flags.json) {
    printJson(io, result);
    return Exit.ok;
  }
  const troupe = troupeCommand();
  io.out(
    [
      'Initialized co-op mode:',
      `  Root: ${root}`,
      `  Agents: ${result.agents.join(', ')}`,
      ...(amqrcWritten ? ['  Created: .amqrc'] : []),
      ...(gitignoreUpdated ? ['  Updated: .gitignore'] : []),
      '',
      'Next steps:',
      ...result.agents
        .slice(0, 2)
        .map((a, i) => `  Terminal ${i + 1}: eval "$(${troupe} bus env --me ${a})" and start ${a}`),
      `  Or the whole team in one go: ${troupe} bus setup, then ${troupe} launch`,
      '',
    ].join('\n'),
  );
  return Exit.ok;
}
