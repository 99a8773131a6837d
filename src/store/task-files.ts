import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskState } from '../engine/task-state.js';

/**
 * The files people and file-reading agents look at, written from the task's state:
 * `.troupe/tasks/<id>/context.md` and `agent_<id>.md`. They only grow, so after the first
 * full write each sync appends what is new. They are projections: the event log is the truth,
 * and a resumed task rewrites them whole.
 */
export class TaskFiles {
  /** Per file: how much has been written, and how it starts (a new session restarts transcript.md). */
  private readonly written = new Map<string, { length: number; head: string }>();

  constructor(readonly dir: string) {}

  static forTask(root: string, taskId: string): TaskFiles {
    return new TaskFiles(join(root, '.troupe', 'tasks', taskId));
  }

  sync(state: TaskState): void {
    if (this.written.size === 0) mkdirSync(this.dir, { recursive: true });
    this.put('context.md', state.contextMd);
    if (state.transcript) this.put('transcript.md', state.transcript);
    for (const [agent, notes] of Object.entries(state.agentNotes)) this.put(`agent_${agent}.md`, notes);
  }

  private put(name: string, content: string): void {
    const done = this.written.get(name);
    if (done?.length === content.length) return;
    const path = join(this.dir, name);
    const head = content.slice(0, 200);
    if (done && content.length > done.length && content.startsWith(done.head))
      appendFileSync(path, content.slice(done.length));
    else writeFileSync(path, content);
    this.written.set(name, { length: content.length, head });
  }
}
