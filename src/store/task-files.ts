import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TaskState } from '../engine/task-state.js';

/**
 * The files people and file-reading agents look at, written from the task's state:
 * `.troupe/tasks/<id>/context.md`, `agent_<id>.md`, `transcript.md` and `chunks.json`. They are
 * projections: the event log is the truth, and a resumed task rewrites them whole. The
 * markdown files only grow (a new session restarts transcript.md), so after the first write
 * a sync appends what is new.
 */
export class TaskFiles {
  /** Per file: how much has been written, and how it starts. */
  private readonly written = new Map<string, { length: number; head: string }>();
  private chunksJson = '';

  constructor(readonly dir: string) {}

  static forTask(root: string, taskId: string): TaskFiles {
    return new TaskFiles(join(root, '.troupe', 'tasks', taskId));
  }

  sync(state: TaskState): void {
    if (this.written.size === 0) mkdirSync(this.dir, { recursive: true });
    this.grow('context.md', state.contextMd);
    for (const [agent, notes] of Object.entries(state.agentNotes)) this.grow(`agent_${agent}.md`, notes);
    if (state.transcript) this.grow('transcript.md', state.transcript);
    if (state.chunks.length > 0 || this.chunksJson) {
      const json = `${JSON.stringify({ chunks: state.chunks }, null, 2)}\n`;
      if (json !== this.chunksJson) writeFileSync(join(this.dir, 'chunks.json'), json);
      this.chunksJson = json;
    }
  }

  private grow(name: string, content: string): void {
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
