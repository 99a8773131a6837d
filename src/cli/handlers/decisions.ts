import { openProject } from '../../app/project.js';
import { NotFoundError, UsageError } from '../../core/errors.js';
import { ROUTE_EVENT_TYPES, routeOutcomes, summarizeOutcomes } from '../../scheduler/route-history.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface DecisionsFlags {
  task?: string;
  since?: string;
  json?: boolean;
}

/** `troupe decisions`: routing decisions and their outcomes, per tier and kind (and per stage with --task). */
export async function showDecisions(flags: DecisionsFlags, io: CommandIo): Promise<number> {
  const since = flags.since ? Date.parse(flags.since) : null;
  if (since !== null && Number.isNaN(since)) throw new UsageError(`--since ${flags.since} is not a date`);
  const project = openProject(io.cwd);
  if (flags.task && !project.store.task(flags.task)) throw new NotFoundError(`no task ${flags.task}`);
  const events = flags.task
    ? project.store.events(flags.task)
    : project.store.eventsOfTypes(ROUTE_EVENT_TYPES, 'decision');
  const decisions = routeOutcomes(events).filter((o) => since === null || Date.parse(o.at) >= since);
  const summary = summarizeOutcomes(decisions);
  if (flags.json) {
    writeJson(io, { summary, decisions });
    return 0;
  }
  if (decisions.length === 0) {
    io.out('no routing decisions yet (agents with model: auto or effort: auto make them)\n');
    return 0;
  }
  const rate = (n: number, of: number) => (of === 0 ? '-' : `${Math.round((100 * n) / of)}%`);
  const table = [
    ['tier', 'kind', 'stages', 'approved', 'rejected', 'tokens/stage', 'cost', 'retries'],
    ...summary.map((r) => [
      r.tier,
      r.kind,
      String(r.stages),
      `${r.approved} (${rate(r.approved, r.approved + r.rejected)})`,
      String(r.rejected),
      String(Math.round(r.tokens / r.stages)),
      `$${r.costUsd.toFixed(4)}`,
      String(r.retries),
    ]),
  ];
  const out = [columns(table)];
  if (flags.task) {
    out.push(
      columns([
        ['stage', 'agent', 'tier', 'verdict', 'why'],
        ...decisions.map((d) => [String(d.stage), d.agent, d.tier, d.verdict ?? '-', d.reason]),
      ]),
    );
  }
  io.out(`${out.join('\n\n')}\n`);
  return 0;
}

function columns(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
