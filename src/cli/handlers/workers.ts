import { openProject } from '../../app/project.js';
import { pruneGoneWorkers, pullWorkerLever, readOverview } from '../../app/queue-admin.js';
import type { WorkerLever } from '../../store/queue/queue-levers.js';
import { laneLine } from '../../store/queue/queue-overview.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface WorkersOptions {
  queue?: string;
  json?: boolean;
  prune?: boolean;
}

/** `troupe workers [--prune]`: the workers on the queue, under a line per lane. */
export async function listWorkers(options: WorkersOptions, io: CommandIo): Promise<number> {
  const project = openProject(io.cwd);
  const pruned = options.prune ? await pruneGoneWorkers(project, options.queue) : null;
  const overview = (await readOverview(project, { given: options.queue, needed: 'troupe workers' }))!;
  if (options.json) {
    writeJson(io, overview.workers);
    return 0;
  }
  if (pruned !== null) io.out(`pruned ${pruned} gone worker${pruned === 1 ? '' : 's'}\n`);
  for (const lane of overview.lanes) io.out(`lane ${laneLine(lane)}\n`);
  if (overview.workers.length === 0) io.out('no workers\n');
  const asked = new Map(
    overview.levers.filter((l) => l.kind === 'worker' && !l.done).map((l) => [l.target, l.action]),
  );
  for (const w of overview.workers) {
    const state = w.gone ? 'gone' : w.tasks.length ? `running ${w.tasks.join(', ')}` : 'idle';
    const labels = w.labels.length ? `  [${w.labels.join(', ')}]` : '';
    const lever = asked.has(w.id) ? `  (asked to ${asked.get(w.id)})` : '';
    io.out(
      `${w.id}  troupe ${w.version ?? '?'}  ${w.runtimes.join(',')}${labels}  ${state}${lever}  stages ${w.stages}, takeovers ${w.takeovers}, lease losses ${w.leaseLosses}, wake-up failures ${w.wakeFailures}  last seen ${w.lastSeen.slice(0, 19)}\n`,
    );
  }
  return 0;
}

/** `troupe worker drain|stop <id>`: asks a worker, from any machine, through the queue. */
export async function pullLever(
  id: string,
  lever: WorkerLever,
  options: { queue?: string },
  io: CommandIo,
): Promise<number> {
  await pullWorkerLever(openProject(io.cwd), options.queue, id, lever);
  io.out(`${id}: asked to ${lever} (it reads this within 5 s)\n`);
  return 0;
}
