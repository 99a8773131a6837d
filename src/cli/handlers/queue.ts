import { openProject } from '../../app/project.js';
import { readOverview, setLanePaused } from '../../app/queue-admin.js';
import { laneLine, totalsLine } from '../../store/queue/queue-overview.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface QueueOptions {
  queue?: string;
  json?: boolean;
}

/** `troupe queue`: the work queue per lane, its active jobs, dead letters and workers. */
export async function showQueue(options: QueueOptions, io: CommandIo): Promise<number> {
  const overview = (await readOverview(openProject(io.cwd), {
    given: options.queue,
    needed: 'troupe queue',
  }))!;
  if (options.json) {
    writeJson(io, overview);
    return 0;
  }
  const out = (line: string) => io.out(`${line}\n`);
  if (overview.lanes.length === 0) out('no lanes yet (nothing was queued)');
  for (const lane of overview.lanes) out(laneLine(lane));
  for (const job of overview.active)
    out(
      `  ${job.taskId} on ${job.lane} since ${job.started.slice(0, 19)}: ${job.holder ?? 'no live worker holds it (it comes back when the job expires or the check lane finds it)'}`,
    );
  out(`dead letters: ${overview.deadLetters}`);
  const live = overview.workers.filter((w) => !w.gone).length;
  out(`workers: ${live} live, ${overview.workers.length - live} gone`);
  out(totalsLine(overview.totals, overview.workers.length));
  return 0;
}

/** `troupe queue pause|resume <lane>`. */
export async function pauseLane(
  lane: string,
  paused: boolean,
  options: { queue?: string },
  io: CommandIo,
): Promise<number> {
  const changed = await setLanePaused(openProject(io.cwd), options.queue, lane, paused);
  io.out(`${lane}: ${changed ? '' : 'already '}${paused ? 'paused' : 'not paused'}\n`);
  return 0;
}
