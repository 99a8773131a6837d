import { readFileSync } from 'node:fs';
import type { Project } from '../app/project.js';
import { messageOf, NotFoundError, UsageError } from '../core/errors.js';
import { awaitsPerson } from '../core/events.js';
import type { Pipeline } from '../core/pipeline.js';
import type { Script } from '../core/script.js';
import { parseBatch, runBatch } from '../scheduler/batch.js';
import { Exit } from './exit-codes.js';
import { printJson } from './options.js';

/** `troupe run --from tasks.json`: independent tasks at the same time, dependencies respected. */
export async function runBatchCommand(
  project: Project,
  pipeline: Pipeline,
  script: Script | null,
  file: string,
  concurrency: number,
  json: boolean,
  routing: { labels: string[]; tier: string | null },
): Promise<number> {
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new UsageError('--concurrency is a whole number of tasks, 1 or more');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`no file ${file}`);
    throw new UsageError(`${file}: not JSON: ${messageOf(error)}`);
  }
  const specs = parseBatch(raw, file);
  const results = await runBatch(specs, concurrency, async (spec) => {
    const task = project.tasks.start({
      pipeline,
      input: spec.input,
      ...(spec.agent ? { agent: spec.agent } : {}),
      labels: [...routing.labels, ...spec.labels],
      tier: spec.tier ?? routing.tier,
      ...(spec.size ? { size: { size: spec.size, by: 'batch' } } : {}),
      script,
      cwd: process.cwd(),
    });
    if (!json) process.stderr.write(`▶ ${spec.id}: ${task}\n`);
    const state = await project.tasks.continue(task);
    if (!json)
      process.stderr.write(
        `${state.status === 'completed' ? '✓' : '✗'} ${spec.id}: ${task} ${state.status}\n`,
      );
    return { task, status: state.status, reason: state.failure?.reason ?? null };
  });
  if (json) printJson(results);
  else
    for (const r of results)
      process.stdout.write(
        `${r.id.padEnd(16)} ${(r.task ?? '-').padEnd(9)} ${r.status}${r.reason ? `: ${r.reason}` : ''}\n`,
      );
  if (results.every((r) => r.status === 'completed')) return Exit.ok;
  if (
    results.some((r) => r.status !== 'skipped' && awaitsPerson(r.status)) &&
    results.every((r) => r.status !== 'failed')
  )
    return Exit.waitingForHuman;
  return Exit.failed;
}
