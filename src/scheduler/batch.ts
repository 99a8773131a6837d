import { messageOf, UsageError } from '../core/errors.js';
import type { TaskStatus } from '../core/events.js';
import { checkTaskInput } from '../core/input-limit.js';
import { parseTaskSize, TASK_SIZES, type TaskSize } from '../core/spec.js';

/** One task of a batch (`troupe run --from tasks.json`). */
export interface BatchSpec {
  /** The batch's own name for it, used by depends_on. */
  id: string;
  input: string;
  depends_on: string[];
  agent: string | null;
  labels: string[];
  tier: string | null;
  size: TaskSize | null;
}

export interface BatchResult {
  id: string;
  task: string | null;
  status: TaskStatus | 'skipped';
  reason: string | null;
}

/** Reads and checks a batch: unique ids, dependencies that exist, no cycle. */
export function parseBatch(raw: unknown, file: string): BatchSpec[] {
  const list = Array.isArray(raw) ? raw : (raw as { tasks?: unknown } | null)?.tasks;
  if (!Array.isArray(list) || list.length === 0) {
    throw new UsageError(
      `${file}: expected a list of tasks ({id, input, depends_on?, agent?, labels?, tier?, size?})`,
    );
  }
  const specs = list.map((entry, i): BatchSpec => {
    const e = entry as Record<string, unknown>;
    const where = `${file}: task ${i + 1}`;
    if (typeof e?.input !== 'string' || !e.input.trim()) throw new UsageError(`${where}: needs an input`);
    // before any task starts: a batch is refused whole, not half run
    checkTaskInput(e.input, `${where}: the input`);
    const deps = e.depends_on ?? [];
    if (!Array.isArray(deps) || deps.some((d) => typeof d !== 'string')) {
      throw new UsageError(`${where}: depends_on is a list of task ids`);
    }
    const size = e.size === undefined || e.size === null ? null : parseTaskSize(String(e.size));
    if (e.size != null && !size) throw new UsageError(`${where}: size is one of ${TASK_SIZES.join(', ')}`);
    const labels = e.labels ?? [];
    if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string')) {
      throw new UsageError(`${where}: labels is a list of strings`);
    }
    return {
      id: typeof e.id === 'string' && e.id ? e.id : String(i + 1),
      input: e.input,
      depends_on: deps as string[],
      agent: typeof e.agent === 'string' ? e.agent : null,
      labels: labels as string[],
      tier: typeof e.tier === 'string' && e.tier ? e.tier : null,
      size,
    };
  });
  const ids = new Set<string>();
  for (const s of specs) {
    if (ids.has(s.id)) throw new UsageError(`${file}: two tasks are called ${s.id}`);
    ids.add(s.id);
  }
  for (const s of specs) {
    for (const d of s.depends_on)
      if (!ids.has(d)) throw new UsageError(`${file}: ${s.id} depends on ${d}, which is not in the list`);
  }
  const visiting = new Set<string>();
  const done = new Set<string>();
  const byId = new Map(specs.map((s) => [s.id, s]));
  const visit = (id: string, path: string[]) => {
    if (done.has(id)) return;
    if (visiting.has(id))
      throw new UsageError(`${file}: the dependencies go round: ${[...path, id].join(' → ')}`);
    visiting.add(id);
    for (const d of byId.get(id)!.depends_on) visit(d, [...path, id]);
    visiting.delete(id);
    done.add(id);
  };
  for (const s of specs) visit(s.id, []);
  return specs;
}

/**
 * Runs a batch, at most `concurrency` tasks at a time; a task starts once everything it
 * depends on has completed, and is skipped when one of them ended any other way.
 */
export async function runBatch(
  specs: BatchSpec[],
  concurrency: number,
  run: (spec: BatchSpec) => Promise<{ task: string; status: TaskStatus; reason: string | null }>,
): Promise<BatchResult[]> {
  const results = new Map<string, BatchResult>();
  const running = new Map<string, Promise<void>>();
  const waiting = [...specs];
  while (waiting.length > 0 || running.size > 0) {
    for (let i = 0; i < waiting.length && running.size < concurrency; ) {
      const spec = waiting[i]!;
      const deps = spec.depends_on.map((d) => results.get(d));
      const broken = deps.find((r) => r && r.status !== 'completed');
      if (broken) {
        results.set(spec.id, {
          id: spec.id,
          task: null,
          status: 'skipped',
          reason: `${broken.id} ended ${broken.status}`,
        });
        waiting.splice(i, 1);
        continue;
      }
      if (deps.some((r) => r === undefined)) {
        i++;
        continue;
      }
      waiting.splice(i, 1);
      running.set(
        spec.id,
        run(spec).then(
          (r) => {
            results.set(spec.id, { id: spec.id, ...r });
            running.delete(spec.id);
          },
          (error: unknown) => {
            results.set(spec.id, {
              id: spec.id,
              task: null,
              status: 'failed',
              reason: messageOf(error),
            });
            running.delete(spec.id);
          },
        ),
      );
    }
    if (running.size === 0) {
      // what is left waits on tasks that will never complete
      for (const spec of waiting.splice(0))
        results.set(spec.id, {
          id: spec.id,
          task: null,
          status: 'skipped',
          reason: 'a dependency did not complete',
        });
      break;
    }
    await Promise.race(running.values());
  }
  return specs.map((s) => results.get(s.id)!);
}
