import { describe, expect, it } from 'vitest';
import { openProject } from '../../app/project.js';
import { NotFoundError, QueueError, UsageError } from '../../core/errors.js';
import { loadScript } from '../../runtimes/script.js';
import { Exit } from '../exit-codes.js';
import { loadProjectPipeline, projectScriptFile } from '../options.js';
import { resumeTask } from './resume.js';
import { capturedIo, captureProcessOutput, SCRIPTED_PAIR, scratchProject } from './testing.js';

const printed = captureProcessOutput();

/** A task of `pipeline` made and never run, as a crash right after `troupe run` started it leaves it. */
function interruptedTask(dir: string, pipeline: string, human?: Record<string, never>): string {
  const project = openProject(dir);
  const loaded = loadProjectPipeline(project, { pipeline });
  const script = loadScript(projectScriptFile(project, loaded.file)!, { pipeline: loaded, warn: () => {} });
  return project.tasks.start({
    pipeline: loaded,
    input: 'go',
    script: human ? { ...script, human } : script,
    cwd: dir,
  });
}

describe('troupe resume', () => {
  it('carries an interrupted task on to its end', async () => {
    const dir = scratchProject(SCRIPTED_PAIR);
    const id = interruptedTask(dir, 'pair');
    expect(openProject(dir).store.task(id)?.status).not.toBe('completed');
    expect(await resumeTask(id, { json: true }, capturedIo(dir))).toBe(Exit.ok);
    expect(JSON.parse(printed.join(''))).toMatchObject({ id, status: 'completed' });
  });

  it('without a terminal to ask at, stops where a person must decide (exit 6)', async () => {
    const dir = scratchProject({
      '.troupe/pipelines/gated.yaml':
        'agents:\n  - id: deployer\n    runtime: scripted\n    gate: { type: human }\n',
      '.troupe/scripts/gated.yaml': 'agents:\n  deployer: ["deployed"]\n',
    });
    const id = interruptedTask(dir, 'gated', {});
    expect(await resumeTask(id, { json: true, interactive: false }, capturedIo(dir))).toBe(
      Exit.waitingForHuman,
    );
  });

  it('needs a task id or --parked (not both); --parked needs a queue; an unknown task is not found', async () => {
    const io = capturedIo(scratchProject());
    await expect(resumeTask(undefined, {}, io)).rejects.toThrow(UsageError);
    await expect(resumeTask('T-ANY', { parked: true }, io)).rejects.toThrow(UsageError);
    await expect(resumeTask(undefined, { parked: true }, io)).rejects.toThrow(QueueError);
    await expect(resumeTask('T-NOSUCH', {}, io)).rejects.toThrow(NotFoundError);
  });
});
