import type { Command } from 'commander';
import { action } from '../action.js';

/** `troupe queue`: the work queue per lane, and the levers on its lanes (docs/distributed.md). */
export function registerQueue(program: Command): void {
  const queue = program
    .command('queue')
    .description(
      "the work queue per lane: backlog, oldest waiting wake-up, active jobs and their workers, retries, failed, dead letters; the workers' takeovers, lease losses, wake-up failures",
    )
    .option('--queue <url>', "the queue's database (as for `troupe worker`)")
    .option('--json', 'print JSON: {lanes, active, deadLetters, workers, totals, levers}')
    .action(
      action(async (options: { queue?: string; json?: boolean }) => {
        const { openProject } = await import('../../app/project.js');
        const { readOverview } = await import('../../app/queue-admin.js');
        const { laneLine, totalsLine } = await import('../../store/queue/queue-overview.js');
        const { printJson } = await import('../options.js');
        const overview = (await readOverview(openProject(), {
          given: options.queue,
          needed: 'troupe queue',
        }))!;
        if (options.json) {
          printJson(overview);
          return 0;
        }
        const out = (line: string) => process.stdout.write(`${line}\n`);
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
      }),
    );
  for (const paused of [true, false]) {
    const verb = paused ? 'pause' : 'resume';
    queue
      .command(`${verb} <lane>`)
      .description(
        paused
          ? 'workers take no new wake-ups of the lane (within 5 s); those running go on'
          : 'workers take the wake-ups of a paused lane again',
      )
      .option('--queue <url>', "the queue's database (as for `troupe worker`)")
      .action(
        action(async (lane: string, options: { queue?: string }) => {
          const { openProject } = await import('../../app/project.js');
          const { setLanePaused } = await import('../../app/queue-admin.js');
          const changed = await setLanePaused(openProject(), options.queue, lane, paused);
          process.stdout.write(`${lane}: ${changed ? '' : 'already '}${paused ? 'paused' : 'not paused'}\n`);
          return 0;
        }),
      );
  }
}
