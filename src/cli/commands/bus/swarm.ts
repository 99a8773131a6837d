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

export async function swarmList(flags: SwarmFlags): Promise<number> {
  const teams = listTeams();
  if (flags.json) printJson(teams);
  else if (teams.length === 0)
    process.stdout.write('no Claude Code agent teams (~/.claude/teams is empty)\n');
  else
    for (const t of teams)
      process.stdout.write(
        `${t.name}  ${t.members.length} member(s): ${t.members.map((m) => m.name).join(', ')}\n`,
      );
  return Exit.ok;
}

export async function swarmTasks(flags: SwarmFlags): Promise<number> {
  const tasks = listTasks(team(flags));
  if (flags.json) printJson(tasks);
  else
    for (const t of tasks) {
      const blocked = t.blockedBy.length ? `  blocked by ${t.blockedBy.join(', ')}` : '';
      process.stdout.write(
        `#${t.id} [${t.status}] ${t.subject}${t.owner ? ` (owner: ${t.owner})` : ''}${blocked}\n`,
      );
    }
  return Exit.ok;
}

export async function swarmJoin(flags: SwarmFlags): Promise<number> {
  const joined = joinTeam(team(flags), me(flags), process.cwd());
  if (flags.json) printJson(joined);
  else
    process.stdout.write(
      `${joined.added ? 'joined' : 'already in'} team ${flags.team} as ${joined.member.name} (${joined.member.agentId})\n`,
    );
  return Exit.ok;
}

export async function swarmClaim(flags: SwarmFlags): Promise<number> {
  const claimed = claimTask(team(flags), task(flags), me(flags));
  if (flags.json) printJson(claimed);
  else process.stdout.write(`claimed #${claimed.id} ${claimed.subject} for ${claimed.owner}\n`);
  return Exit.ok;
}

export async function swarmComplete(flags: SwarmFlags): Promise<number> {
  const done = completeTask(team(flags), task(flags), me(flags));
  if (flags.json) printJson(done);
  else process.stdout.write(`completed #${done.id} ${done.subject}\n`);
  return Exit.ok;
}

/** Runs until SIGINT / SIGTERM: the team's task changes for `--me` become mail in its inbox. */
export async function swarmBridge(flags: SwarmFlags): Promise<number> {
  const name = team(flags);
  const handle = me(flags);
  const members = loadTeam(name);
  const agentId = members.members.find((m) => m.name === handle)?.agentId ?? `${handle}@${members.name}`;
  const { bus } = openFromFlags(flags);
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  const pollMs = parseDuration(flags.pollInterval ?? '3s', '--poll-interval');
  process.stderr.write(`bridging team ${name} to ${handle}'s inbox (thread swarm/${name})\n`);
  await runSwarmBridge({
    bus,
    team: name,
    me: { handle, agentId },
    pollMs: Math.max(pollMs, 50),
    signal: stop.signal,
    onEvent: (e) => {
      if (flags.json) process.stdout.write(`${JSON.stringify(e)}\n`);
      else process.stdout.write(`${e.type} #${e.taskId} ${e.subject}\n`);
    },
    onError: (error) => warn(`bridge: ${error instanceof Error ? error.message : String(error)}`),
  });
  return Exit.ok;
}
