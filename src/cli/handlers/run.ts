import { resolve } from 'node:path';
import { openProject } from '../../app/project.js';
import { UsageError } from '../../core/errors.js';
import type { Pipeline } from '../../core/pipeline.js';
import { parseTaskSize, TASK_SIZES, type TaskSize } from '../../core/spec.js';
import { loadScript } from '../../runtimes/script.js';
import { runBatchCommand } from '../batch-run.js';
import type { CommandIo } from '../command-io.js';
import { runForeground } from '../foreground.js';
import { loadProjectPipeline, printWarning, projectScriptFile } from '../options.js';
import type { PipelineOptions } from '../pipeline-flags.js';
import { submitTask } from '../submit.js';

export interface RunOptions extends PipelineOptions {
  agent?: string;
  from?: string;
  concurrency: number;
  script?: string;
  json?: boolean;
  interactive?: boolean;
  tier?: string;
  label: string[];
  size?: string;
  detach?: boolean;
  queue?: string;
}

/**
 * `troupe run <input...>`: one task run here until it ends or waits for a person, or handed to
 * the workers (--detach); `--from tasks.json` runs a list of them.
 */
export async function runTask(words: string[], options: RunOptions, io: CommandIo): Promise<number> {
  if (options.from && words.length > 0) throw new UsageError('give an input or --from, not both');
  if (!options.from && words.length === 0)
    throw new UsageError('what should the team do? give an input, or --from tasks.json');
  const size = options.size === undefined ? undefined : parseSizeFlag(options.size);
  if (size && options.from) throw new UsageError('--size applies to one input, not to --from');
  if (options.detach && options.from) throw new UsageError('--detach applies to one input, not to --from');
  const project = openProject(io.cwd);
  const pipeline = loadProjectPipeline(project, options);
  // without --script, a pipeline with scripted agents runs with its own replies, checked
  // against it before anything runs (a script made for another pipeline names other agents)
  const scriptFile = options.script
    ? resolve(io.cwd, options.script)
    : usesScripted(pipeline)
      ? projectScriptFile(project, pipeline.file)
      : null;
  const loaded = scriptFile
    ? loadScript(scriptFile, {
        pipeline,
        ...(options.agent ? { start: options.agent } : {}),
        warn: printWarning,
      })
    : null;
  // the project's replies stand in for the agents; its answers for people are `troupe test`'s:
  // in a run, people decide
  const script = loaded && !options.script ? { ...loaded, human: {} } : loaded;
  if (options.from) {
    return runBatchCommand(
      project,
      pipeline,
      script,
      options.from,
      options.concurrency,
      options.json === true,
      {
        labels: options.label,
        tier: options.tier ?? null,
      },
    );
  }
  const start = () =>
    project.tasks.start({
      pipeline,
      input: words.join(' '),
      ...(options.agent ? { agent: options.agent } : {}),
      labels: options.label,
      tier: options.tier ?? null,
      script,
      cwd: io.cwd,
      ...(size ? { size: { size, by: 'cli' } } : {}),
    });
  if (options.detach) {
    return submitTask(project, start, { queue: options.queue, json: options.json === true });
  }
  return runForeground(project, start(), {
    json: options.json === true,
    ...(options.interactive === undefined ? {} : { interactive: options.interactive }),
  });
}

function parseSizeFlag(value: string): TaskSize {
  const size = parseTaskSize(value);
  if (!size) throw new UsageError(`--size is one of ${TASK_SIZES.join(', ')} (got \`${value}\`)`);
  return size;
}

function usesScripted(pipeline: Pipeline): boolean {
  return pipeline.agents.some((a) => a.type === 'agent' && a.runtime === 'scripted');
}
