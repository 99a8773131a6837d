import { existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { runPipelineTest } from '../../app/pipeline-test.js';
import { openProject } from '../../app/project.js';
import { taskJson } from '../../app/task-view.js';
import { UsageError } from '../../core/errors.js';
import { loadScript } from '../../runtimes/script.js';
import { type CommandIo, writeJson } from '../command-io.js';
import { loadProjectPipeline, printWarning, projectScriptFile } from '../options.js';
import type { PipelineOptions } from '../pipeline-flags.js';

export interface TestOptions extends PipelineOptions {
  script?: string;
  input: string;
  agent?: string;
  json?: boolean;
}

/** `troupe test`: a pipeline run offline against a script; exit 1 unless it completes. */
export async function testPipeline(options: TestOptions, io: CommandIo): Promise<number> {
  const project = openProject(io.cwd);
  const pipeline = loadProjectPipeline(project, options);
  const scriptFile = options.script
    ? resolve(io.cwd, options.script)
    : defaultScript(pipeline.file, projectScriptFile(project, pipeline.file));
  const script = loadScript(scriptFile, {
    pipeline,
    ...(options.agent ? { start: options.agent } : {}),
    warn: printWarning,
  });
  const { id, state, passed, kept } = await runPipelineTest(project, {
    pipeline,
    script,
    input: options.input,
    ...(options.agent ? { agent: options.agent } : {}),
    cwd: io.cwd,
  });
  if (options.json) writeJson(io, { passed, ...taskJson(state) });
  else if (passed) {
    const path = state.stages.map((s) => s.agent).join(' → ');
    io.out(
      `✓ ${pipeline.name}: completed in ${state.stages.length} stage${state.stages.length === 1 ? '' : 's'} (${id}): ${path}\n`,
    );
  } else {
    const why = state.failure?.reason ?? `ended ${state.status}`;
    io.out(`✗ ${pipeline.name}: ${state.status} (${id}): ${why}\n`);
    if (kept) io.out(`  its worktree is kept to look at: ${kept}\n`);
  }
  return passed ? 0 : 1;
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
