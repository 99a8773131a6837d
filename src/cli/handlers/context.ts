import { openProject } from '../../app/project.js';
import { type CommandIo, writeJson } from '../command-io.js';

/** `troupe context`: the task's context.md, or with the agents' notes as JSON. */
export async function showContext(
  taskId: string,
  options: { json?: boolean },
  io: CommandIo,
): Promise<number> {
  const state = openProject(io.cwd).tasks.state(taskId);
  if (options.json) writeJson(io, { id: state.id, context: state.contextMd, agents: state.agentNotes });
  else io.out(state.contextMd);
  return 0;
}
