import { allParked } from '../../app/parked.js';
import { openProject, type Project } from '../../app/project.js';
import { deadLetters, parkedTasks } from '../../app/queue-config.js';
import { issueTag, ownerGoneHint, taskOwner } from '../../app/task-view.js';
import { mayWaitForWorker, noWorkerReason, readWorkersIfWaiting } from '../../app/worker-wait.js';
import { QueueError, UsageError } from '../../core/errors.js';
import { AWAITING_PERSON_STATUSES, isTaskStatus, TASK_STATUSES, type TaskStatus } from '../../core/events.js';
import { printable } from '../../core/printable.js';
import { waitingFor } from '../../engine/fold/task-state.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface ListOptions {
  status?: string;
  waiting?: boolean;
  dead?: boolean;
  limit: number;
  json?: boolean;
}

/** `troupe list`: tasks newest first, filtered by status, waiting for a person, or given up on by the queue. */
export async function listTasks(options: ListOptions, io: CommandIo): Promise<number> {
  const status = options.waiting ? [...AWAITING_PERSON_STATUSES] : statuses(options.status);
  const project = openProject(io.cwd);
  const dead = options.dead ? await deadTasks(project) : null;
  const tasks = dead
    ? dead
        .flatMap((d) => {
          const task = project.store.task(d.taskId);
          // parked by the queue alone (its log refused the append) is parked all the same
          return task ? [{ ...task, status: d.parked ? ('parked' as const) : task.status }] : [];
        })
        .slice(0, options.limit)
    : project.store.tasks({
        ...(status ? { status } : {}),
        limit: options.limit,
      });
  // only a task that has not ended has an owner
  const owned = tasks.map((t) => ({ ...t, owner: taskOwner(project.store, t.id, t.status) }));
  const workers = await readWorkersIfWaiting(project, owned);
  const noWorker = (t: (typeof owned)[number]) => {
    if (!workers || !mayWaitForWorker(t.status, t.owner)) return {};
    const reason = noWorkerReason(project.tasks.state(t.id), t.owner, workers);
    return reason ? { no_worker: reason } : {};
  };
  const rows = owned.map((t) => ({
    id: t.id,
    status: t.status,
    pipeline: t.pipeline,
    input: t.input,
    created: t.created,
    issue: t.issue,
    ...(t.owner ? { owner: t.owner } : {}),
    ...noWorker(t),
    ...(options.waiting ? { waiting: waitingFor(project.tasks.state(t.id)) } : {}),
    ...(dead ? { error: dead.find((d) => d.taskId === t.id)!.error } : {}),
  }));
  if (options.json) {
    writeJson(io, rows);
    return 0;
  }
  if (rows.length === 0) io.out('no tasks\n');
  for (const row of rows) {
    const input = `${title(row.input)}${row.issue ? `  [${issueTag(row.issue)}]` : ''}`;
    io.out(
      `${row.id}  ${row.status.padEnd(20)} ${row.pipeline.padEnd(16)} ${row.created.slice(0, 19)}  ${input}\n`,
    );
    if (row.error) io.out(`           ${row.status === 'parked' ? 'parked' : 'dead'}: ${row.error}\n`);
    const gone = ownerGoneHint(row.id, row.owner ?? null);
    if (gone) io.out(`           ${gone}\n`);
    if (row.no_worker) io.out(`           not taken: ${row.no_worker}\n`);
    if (row.waiting) {
      const asks = row.waiting.kind === 'gate' ? 'approval' : row.waiting.questions.join(' / ');
      io.out(`           ${row.waiting.agent} asks: ${asks}\n`);
    }
  }
  return 0;
}

/** The parked tasks, then the dead letters of the rest, each once, with its last error. */
async function deadTasks(
  project: Project,
): Promise<Array<{ taskId: string; error: string; parked: boolean }>> {
  const [dead, marks] = [await deadLetters(project), await parkedTasks(project)];
  if (!dead || !marks)
    throw new QueueError('--dead needs the work queue, and none is configured', {
      hint: 'set TROUPE_QUEUE or add `queue: postgres://…` to .troupe/config.yaml',
    });
  const parked = allParked(project.store, marks, (id) => project.tasks.state(id)).map((p) => ({
    taskId: p.taskId,
    error: p.reason,
    parked: true,
  }));
  const letters = dead
    .filter((d) => !parked.some((p) => p.taskId === d.taskId))
    .map((d) => ({ taskId: d.taskId, error: d.error, parked: false }));
  return [...parked, ...letters.filter((d, i) => letters.findIndex((o) => o.taskId === d.taskId) === i)];
}

function statuses(list: string | undefined): TaskStatus[] | undefined {
  const given = list?.split(',').map((s) => s.trim());
  const unknown = given?.filter((s) => !isTaskStatus(s));
  if (unknown?.length)
    throw new UsageError(`unknown status ${unknown.join(', ')}; one of ${TASK_STATUSES.join(', ')}`);
  return given as TaskStatus[] | undefined;
}

/** A task's input as one line of the table: its first line with text, at most 50 characters. */
function title(input: string): string {
  const first = printable(input.split('\n').find((line) => line.trim()) ?? '');
  return first.length > 50 ? `${first.slice(0, 47)}...` : first;
}
