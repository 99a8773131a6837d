import { openProject } from '../../app/project.js';
import { taskJson, taskOwner } from '../../app/task-view.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface CancelOptions {
  reason: string;
  json?: boolean;
}

/** `troupe cancel`: records the cancellation; the process running the task stops on its own. */
export async function cancelTask(taskId: string, options: CancelOptions, io: CommandIo): Promise<number> {
  const project = openProject(io.cwd);
  project.tasks.cancel(taskId, options.reason);
  if (options.json) {
    const state = project.tasks.state(taskId);
    writeJson(io, taskJson(state, taskOwner(project.store, taskId, state.status)));
  } else io.out(`cancelled ${taskId}\n`);
  return 0;
}
