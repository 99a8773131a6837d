import { openProject, type Project } from '../../app/project.js';
import type { CommandIo } from '../command-io.js';
import { personAtTerminal } from '../decider.js';
import { runForeground } from '../foreground.js';
import { submitTask } from '../submit.js';

export interface DecideOptions {
  json?: boolean;
  detach?: boolean;
}

/** What the person said: a gate's verdict, or the answer to a task's question. */
export type Decision = { kind: 'approve' | 'reject'; reason: string } | { kind: 'answer'; answer: string };

/**
 * approve, reject and human-input: records the person's word, then carries the task on here
 * (or, `--detach`, hands it to the workers). The task's progress goes to the terminal as `troupe
 * run`'s does (foreground.ts), so only `cwd` is read from `io`.
 */
export async function decide(
  taskId: string,
  decision: Decision,
  options: DecideOptions,
  io: CommandIo,
): Promise<number> {
  const project = openProject(io.cwd);
  const json = options.json === true;
  const record = () => recordDecision(project, taskId, decision);
  if (options.detach) {
    return submitTask(
      project,
      () => {
        record();
        return taskId;
      },
      { json },
    );
  }
  record();
  return runForeground(project, taskId, { json });
}

function recordDecision(project: Project, taskId: string, decision: Decision): void {
  if (decision.kind === 'answer') project.tasks.answer(taskId, decision.answer);
  else
    project.tasks.decideGate(
      taskId,
      decision.kind === 'approve' ? 'approved' : 'rejected',
      decision.reason,
      personAtTerminal(),
    );
}
