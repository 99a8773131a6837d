import { parseDuration } from '../../../bus/duration.js';
import {
  claimTask,
  completeTask,
  joinTeam,
  listTasks,
  listTeams,
  loadTeam,
  runSwarmBridge,
} from '../../../bus/swarm/index.js';
import { UsageError } from '../../../core/errors.js';
import { printable } from '../../../core/printable.js';
import type { CommandIo } from '../../command-io.js';
import { Exit } from '../../exit-codes.js';
import { type BusFlags, printJson, warn } from './context.js';
import { me, openFromFlags } from './open.js';

/** `troupe bus swarm …`: join a Claude Code Agent Team, take its tasks, bridge them to the bus (docs/swarm.md). */

export interface SwarmFlags extends BusFlags {
  team?: string;
  task?: string;
}

function team(flags: SwarmFlags): string {
  if (!flags.team) throw new UsageError('--team is required (see `troupe bus swarm list`)');
  return flags.team;
}

function task(flags: SwarmFlags): string {
  if (!flags.task) throw new UsageError('--task is required (see `troupe bus swarm tasks`)');
  return flags.task;
}

/** `#<id> <subject>`: what the team's files say, cleaned for the terminal. */
const taskLine = (t: { id: string; subject: string }) => printable(`#${t.id} ${t.subject}`);

export async function swarmList(flags: SwarmFlags, io: CommandIo): Promise<number> {
  const teams = listTeams((message) => warn(io, message));
  if (flags.json) printJson(io, teams);
  else if (teams.length === 0) io.out('no Claude Code agent teams (~/.claude/teams is empty)\n');
  else
    for (const t of teams)
      io.out(
        `${printable(t.name)}  ${t.members.length} member(s): ${printable(t.members.map((m) => m.name).join(', '))}\n`,
      );
  return Exit.ok;
}

export async function swarmTasks(flags: SwarmFlags, io: CommandIo): Promise<number> {
  const tasks = listTasks(team(flags), (message) => warn(io, message));
  if (flags.json) printJson(io, tasks);
  else
    for (const t of tasks) {
      const blocked = t.blockedBy.length ? `  blocked by ${printable(t.blockedBy.join(', '))}` : '';
      const owner = t.owner ? ` (owner: ${printable(t.owner)})` : '';
      io.out(`${printable(`#${t.id} [${t.status}] ${t.subject}`)}${owner}${blocked}\n`);
    }
  return Exit.ok;
}

export async function swarmJoin(flags: SwarmFlags, io: CommandIo): Promise<number> {
  const joined = joinTeam(team(flags), me(flags), io.cwd);
  if (flags.json) printJson(io, joined);
  else
    io.out(
      `${joined.added ? 'joined' : 'already in'} team ${flags.team} as ${printable(joined.member.name)} (${printable(joined.member.agentId)})\n`,
    );
  return Exit.ok;
}

export async function swarmClaim(flags: SwarmFlags, io: CommandIo): Promise<number> {
  const claimed = claimTask(team(flags), task(flags), me(flags));
  if (flags.json) printJson(io, claimed);
  else io.out(`claimed ${taskLine(claimed)} for ${printable(claimed.owner)}\n`);
  return Exit.ok;
}

export async function swarmComplete(flags: SwarmFlags, io: CommandIo): Promise<number> {
  const done = completeTask(team(flags), task(flags), me(flags));
  if (flags.json) printJson(io, done);
  else io.out(`completed ${taskLine(done)}\n`);
  return Exit.ok;
}

/** Runs until SIGINT / SIGTERM: the team's task changes for `--me` become mail in its inbox. */
export async function swarmBridge(flags: SwarmFlags, io: CommandIo): Promise<number> {
  const name = team(flags);
  const handle = me(flags);
  const members = loadTeam(name, (message) => warn(io, message));
  const agentId = members.members.find((m) => m.name === handle)?.agentId ?? `${handle}@${members.name}`;
  const { bus } = openFromFlags(flags, io);
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  const pollMs = parseDuration(flags.pollInterval ?? '3s', '--poll-interval');
  await runSwarmBridge({
    bus,
    team: name,
    me: { handle, agentId },
    pollMs: Math.max(pollMs, 50),
    signal: stop.signal,
    onStart: () => io.err(`bridging team ${name} to ${handle}'s inbox (thread swarm/${name})\n`),
    onEvent: (e) => {
      if (flags.json) io.out(`${JSON.stringify(e)}\n`);
      else io.out(`${e.type} #${printable(e.taskId)} ${printable(e.subject)}\n`);
    },
    onWarning: (message) => warn(io, message),
    onError: (error) => warn(io, `bridge: ${error instanceof Error ? error.message : String(error)}`),
  });
  return Exit.ok;
}
