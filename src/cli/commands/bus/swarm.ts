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

export async function swarmList(flags: SwarmFlags): Promise<number> {
  const teams = listTeams(warn);
  if (flags.json) printJson(teams);
  else if (teams.length === 0)
    process.stdout.write('no Claude Code agent teams (~/.claude/teams is empty)\n');
  else
    for (const t of teams)
      process.stdout.write(
        `${printable(t.name)}  ${t.members.length} member(s): ${printable(t.members.map((m) => m.name).join(', '))}\n`,
      );
  return Exit.ok;
}

export async function swarmTasks(flags: SwarmFlags): Promise<number> {
  const tasks = listTasks(team(flags), warn);
  if (flags.json) printJson(tasks);
  else
    for (const t of tasks) {
      const blocked = t.blockedBy.length ? `  blocked by ${printable(t.blockedBy.join(', '))}` : '';
      const owner = t.owner ? ` (owner: ${printable(t.owner)})` : '';
      process.stdout.write(`${printable(`#${t.id} [${t.status}] ${t.subject}`)}${owner}${blocked}\n`);
    }
  return Exit.ok;
}

export async function swarmJoin(flags: SwarmFlags): Promise<number> {
  const joined = joinTeam(team(flags), me(flags), process.cwd());
  if (flags.json) printJson(joined);
  else
    process.stdout.write(
      `${joined.added ? 'joined' : 'already in'} team ${flags.team} as ${printable(joined.member.name)} (${printable(joined.member.agentId)})\n`,
    );
  return Exit.ok;
}

export async function swarmClaim(flags: SwarmFlags): Promise<number> {
  const claimed = claimTask(team(flags), task(flags), me(flags));
  if (flags.json) printJson(claimed);
  else process.stdout.write(`claimed ${taskLine(claimed)} for ${printable(claimed.owner)}\n`);
  return Exit.ok;
}

export async function swarmComplete(flags: SwarmFlags): Promise<number> {
  const done = completeTask(team(flags), task(flags), me(flags));
  if (flags.json) printJson(done);
  else process.stdout.write(`completed ${taskLine(done)}\n`);
  return Exit.ok;
}

/** Runs until SIGINT / SIGTERM: the team's task changes for `--me` become mail in its inbox. */
export async function swarmBridge(flags: SwarmFlags): Promise<number> {
  const name = team(flags);
  const handle = me(flags);
  const members = loadTeam(name, warn);
  const agentId = members.members.find((m) => m.name === handle)?.agentId ?? `${handle}@${members.name}`;
  const { bus } = openFromFlags(flags);
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  const pollMs = parseDuration(flags.pollInterval ?? '3s', '--poll-interval');
  await runSwarmBridge({
    bus,
    team: name,
    me: { handle, agentId },
    pollMs: Math.max(pollMs, 50),
    signal: stop.signal,
    onStart: () =>
      process.stderr.write(`bridging team ${name} to ${handle}'s inbox (thread swarm/${name})\n`),
    onEvent: (e) => {
      if (flags.json) process.stdout.write(`${JSON.stringify(e)}\n`);
      else process.stdout.write(`${e.type} #${printable(e.taskId)} ${printable(e.subject)}\n`);
    },
    onWarning: warn,
    onError: (error) => warn(`bridge: ${error instanceof Error ? error.message : String(error)}`),
  });
  return Exit.ok;
}
