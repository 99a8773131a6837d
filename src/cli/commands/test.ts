import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../core/errors.js';
import { action } from '../action.js';
import { addPipelineOptions, type PipelineOptions } from '../pipeline-flags.js';

interface TestOptions extends PipelineOptions {
  script?: string;
  input: string;
  agent?: string;
  json?: boolean;
}

export function registerTest(program: Command): void {
  addPipelineOptions(
    program.command('test').description('run a pipeline offline against a script; fails unless it completes'),
  )
    .option(
      '-s, --script <file>',
      'script of replies (default: script.yaml or <pipeline>.script.yaml beside the pipeline)',
    )
    .option('-i, --input <text>', 'the task input', 'troupe test')
    .option('-a, --agent <id>', 'start at this agent')
    .option('--json', 'print the finished task as JSON')
    .action(
      action(async (options: TestOptions) => {
        const { openProject } = await import('../../app/project.js');
        const { loadProjectPipeline, printJson, printWarning, projectScriptFile } = await import(
          '../options.js'
        );
        const { loadScript } = await import('../../runtimes/script.js');
        const { taskJson } = await import('../../app/task-view.js');
        const project = openProject();
        const pipeline = loadProjectPipeline(project, options);
        const scriptFile = options.script
          ? resolve(options.script)
          : defaultScript(pipeline.file, projectScriptFile(project, pipeline.file));
        const script = loadScript(scriptFile, {
          pipeline,
          ...(options.agent ? { start: options.agent } : {}),
          warn: printWarning,
        });
        const { testPipeline } = await import('../../app/pipeline-test.js');
        const { id, state, passed, kept } = await testPipeline(project, {
          pipeline,
          script,
          input: options.input,
          ...(options.agent ? { agent: options.agent } : {}),
          cwd: process.cwd(),
        });
        if (options.json) printJson({ passed, ...taskJson(state) });
        else if (passed) {
          const path = state.stages.map((s) => s.agent).join(' → ');
          process.stdout.write(
            `✓ ${pipeline.name}: completed in ${state.stages.length} stage${state.stages.length === 1 ? '' : 's'} (${id}): ${path}\n`,
          );
        } else {
          const why = state.failure?.reason ?? `ended ${state.status}`;
          process.stdout.write(`✗ ${pipeline.name}: ${state.status} (${id}): ${why}\n`);
          if (kept) process.stdout.write(`  its worktree is kept to look at: ${kept}\n`);
        }
        return passed ? 0 : 1;
      }),
    );
}

/** The script beside the pipeline (`<pipeline>.script.yaml`, `script.yaml`), else the project's for it. */
function defaultScript(pipelineFile: string, projectScript: string | null): string {
  const dir = dirname(pipelineFile);
  const stem = basename(pipelineFile).replace(/\.ya?ml$/, '');
  const beside = [join(dir, `${stem}.script.yaml`), join(dir, 'script.yaml')];
  const found = beside.find((c) => existsSync(c)) ?? projectScript;
  if (!found)
    throw new UsageError(`no script given and none found for the pipeline`, {
      hint: `looked for ${[...beside, join('.troupe', 'scripts', `${stem}.yaml`)].join(', ')} and the config's script:; pass --script <file>`,
    });
  return found;
}
