import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Pipeline } from '../../core/pipeline.js';
import { action } from '../action.js';
import { wholeNumber } from '../arg-parsers.js';
import { addPipelineOptions, type PipelineOptions } from '../pipeline-flags.js';

interface RunOptions extends PipelineOptions {
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

export function registerRun(program: Command): void {
  addPipelineOptions(
    program
      .command('run')
      .description('run a pipeline on an input, in the foreground, until it ends or waits for a person')
      .argument('[input...]', 'what to do (the words are joined)'),
  )
    .option('-a, --agent <id>', 'start at this agent instead of the entry point')
    .option('-s, --script <file>', 'run every agent and llm gate on the scripted runtime (offline)')
    .option('--interactive', 'ask here when the task waits for a person (default on a terminal)')
    .option('--no-interactive', 'exit with code 6 when the task waits for a person')
    .option(
      '--from <tasks.json>',
      'run a list of tasks [{id, input, depends_on?, agent?, labels?, tier?, size?}] instead of one input',
    )
    .option('-c, --concurrency <n>', 'with --from: how many tasks run at the same time', wholeNumber(1), 4)
    .option('--tier <name>', 'run every routed stage (model/effort auto) on this tier of routing: in config')
    .option(
      '-l, --label <label>',
      'a label for routing rules (repeatable)',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option(
      '--size <size>',
      'the task size, S | M | L | XL (agents with `spec: required` need a spec from M)',
    )
    .option('--detach', 'submit the task to the workers (`troupe worker`), print its id and exit')
    .option(
      '--queue <url>',
      'with --detach: the queue, postgres://… (default: TROUPE_QUEUE, queue: in config)',
    )
    .option('--json', 'print the finished task as JSON')
    .action(
      action(async (words: string[], options: RunOptions) => {
        const { openProject } = await import('../../app/project.js');
        const { loadProjectPipeline, printWarning, projectScriptFile } = await import('../options.js');
        const { loadScript } = await import('../../runtimes/script.js');
        const { runForeground } = await import('../foreground.js');
        const { UsageError } = await import('../../core/errors.js');
        if (options.from && words.length > 0) throw new UsageError('give an input or --from, not both');
        if (!options.from && words.length === 0)
          throw new UsageError('what should the team do? give an input, or --from tasks.json');
        const size = options.size === undefined ? undefined : await parseSizeFlag(options.size);
        if (size && options.from) throw new UsageError('--size applies to one input, not to --from');
        if (options.detach && options.from)
          throw new UsageError('--detach applies to one input, not to --from');
        const project = openProject();
        const pipeline = loadProjectPipeline(project, options);
        // without --script, a pipeline with scripted agents runs with its own replies, checked
        // against it before anything runs (a script made for another pipeline names other agents)
        const scriptFile = options.script
          ? resolve(options.script)
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
          const { runBatchCommand } = await import('../batch-run.js');
          return runBatchCommand(
            project,
            pipeline,
            script,
            options.from,
            options.concurrency,
            options.json === true,
            { labels: options.label, tier: options.tier ?? null },
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
            cwd: process.cwd(),
            ...(size ? { size: { size, by: 'cli' } } : {}),
          });
        if (options.detach) {
          const { submitTask } = await import('../submit.js');
          return submitTask(project, start, { queue: options.queue, json: options.json === true });
        }
        const id = start();
        return runForeground(project, id, {
          json: options.json === true,
          ...(options.interactive === undefined ? {} : { interactive: options.interactive }),
        });
      }),
    );
}

async function parseSizeFlag(value: string) {
  const { parseTaskSize, TASK_SIZES } = await import('../../core/spec.js');
  const { UsageError } = await import('../../core/errors.js');
  const size = parseTaskSize(value);
  if (!size) throw new UsageError(`--size is one of ${TASK_SIZES.join(', ')} (got \`${value}\`)`);
  return size;
}

function usesScripted(pipeline: Pipeline): boolean {
  return pipeline.agents.some((a) => a.type === 'agent' && a.runtime === 'scripted');
}
