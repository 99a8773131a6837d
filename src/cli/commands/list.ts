import type { Command } from 'commander';
import type { Project } from '../../app/project.js';
import { UsageError } from '../../core/errors.js';
import { AWAITING_PERSON_STATUSES, isTaskStatus, TASK_STATUSES, type TaskStatus } from '../../core/events.js';
import { printable } from '../../core/printable.js';
import { action } from '../action.js';
import { wholeNumber } from '../arg-parsers.js';

export function registerList(program: Command): void {
  program
    .command('list')
    .description('list tasks, newest first')
    .option('--status <status>', 'only tasks with this status (comma list)')
    .option('--waiting', 'only tasks waiting for a person, with what they ask')
    .option(
      '--dead',
      'only tasks the work queue gave up on (parked, or in its dead-letter queue), with their last error',
    )
    .option('-n, --limit <n>', 'at most n tasks', wholeNumber(1), 50)
    .option('--json', 'print JSON: [{id, status, pipeline, input, created, owner (while it has not ended)}]')
    .action(
      action(
        async (options: {
          status?: string;
          waiting?: boolean;
          dead?: boolean;
          limit: number;
          json?: boolean;
        }) => {
          const { openProject } = await import('../../app/project.js');
          const { printJson } = await import('../options.js');
          const { waitingFor } = await import('../../engine/fold/task-state.js');
          const { ownerGoneHint, taskOwner } = await import('../../app/task-view.js');
          const status = options.waiting ? [...AWAITING_PERSON_STATUSES] : statuses(options.status);
          const project = openProject();
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
          const { mayWaitForWorker, noWorkerReason, readWorkersIfWaiting } = await import(
            '../../app/worker-wait.js'
          );
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
            ...(t.owner ? { owner: t.owner } : {}),
            ...noWorker(t),
            ...(options.waiting ? { waiting: waitingFor(project.tasks.state(t.id)) } : {}),
            ...(dead ? { error: dead.find((d) => d.taskId === t.id)!.error } : {}),
          }));
          if (options.json) {
            printJson(rows);
            return 0;
          }
          if (rows.length === 0) process.stdout.write('no tasks\n');
          for (const row of rows) {
            const input = title(row.input);
            process.stdout.write(
              `${row.id}  ${row.status.padEnd(20)} ${row.pipeline.padEnd(16)} ${row.created.slice(0, 19)}  ${input}\n`,
            );
            if (row.error)
              process.stdout.write(
                `           ${row.status === 'parked' ? 'parked' : 'dead'}: ${row.error}\n`,
              );
            const gone = ownerGoneHint(row.id, row.owner ?? null);
            if (gone) process.stdout.write(`           ${gone}\n`);
            if (row.no_worker) process.stdout.write(`           not taken: ${row.no_worker}\n`);
            if (row.waiting) {
              const asks = row.waiting.kind === 'gate' ? 'approval' : row.waiting.questions.join(' / ');
              process.stdout.write(`           ${row.waiting.agent} asks: ${asks}\n`);
            }
          }
          return 0;
        },
      ),
    );
}

/** The parked tasks, then the dead letters of the rest, each once, with its last error. */
async function deadTasks(
  project: Project,
): Promise<Array<{ taskId: string; error: string; parked: boolean }>> {
  const { deadLetters, parkedTasks } = await import('../../app/queue-config.js');
  const { allParked } = await import('../../app/parked.js');
  const { QueueError } = await import('../../core/errors.js');
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
