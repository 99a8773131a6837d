import { liveOutput } from './live-output.js';
import { printJson } from './options.js';
import type { Project } from './project.js';
import { exitCodeForTask, taskJson, waitingFor } from './task-view.js';

/** Runs a task here until it ends or waits, showing progress (or JSON at the end); returns the exit code. */
export async function runForeground(
  project: Project,
  taskId: string,
  options: { json: boolean },
): Promise<number> {
  if (!options.json) process.stderr.write(`troupe ${taskId} · .troupe/tasks/${taskId}/\n`);
  const state = await project.tasks.continue(taskId, options.json ? undefined : liveOutput());
  if (options.json) printJson(taskJson(state));
  else {
    const waiting = waitingFor(state);
    if (waiting)
      process.stderr.write(
        `⏸ ${taskId} is waiting for you (${waiting.kind} at ${waiting.agent}); it holds no process.\n`,
      );
  }
  return exitCodeForTask(state);
}
