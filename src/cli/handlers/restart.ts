import { resolve } from 'node:path';
import { openProject } from '../../app/project.js';
import { UsageError } from '../../core/errors.js';
import { loadScript } from '../../runtimes/script.js';
import type { CommandIo } from '../command-io.js';
import { runForeground } from '../foreground.js';

export interface RestartOptions {
  fromStage?: string;
  json?: boolean;
}

/** `troupe restart <task>`: run it again from a stage (default: the failed one), here. */
export async function restartTask(taskId: string, options: RestartOptions, io: CommandIo): Promise<number> {
  const from = options.fromStage === undefined ? undefined : Number(options.fromStage);
  if (from !== undefined && !Number.isInteger(from))
    throw new UsageError(`--from-stage expects a stage number, got '${options.fromStage}'`);
  const project = openProject(io.cwd);
  const n = project.tasks.restart(taskId, from);
  if (!options.json) io.err(`restarting ${taskId} from stage ${n}\n`);
  return runForeground(project, taskId, { json: options.json === true });
}

export interface FixOptions {
  agent?: string;
  script?: string;
  json?: boolean;
}

/** `troupe fix <task> <request...>`: a follow-up task carrying the task's context, run here. */
export async function fixTask(
  taskId: string,
  words: string[],
  options: FixOptions,
  io: CommandIo,
): Promise<number> {
  const project = openProject(io.cwd);
  const id = project.tasks.fix(taskId, words.join(' '), {
    ...(options.agent ? { agent: options.agent } : {}),
    ...(options.script ? { script: loadScript(resolve(io.cwd, options.script)) } : {}),
  });
  return runForeground(project, id, { json: options.json === true });
}
