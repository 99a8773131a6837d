import type { TaskState } from '../fold/task-state.js';
import type { TaskProjection } from '../ports.js';

/**
 * The human-readable files follow the log within 250 ms, and are brought up to date before any
 * runtime that may read them starts and when the run stops.
 */
export class FileSync {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly files: TaskProjection,
    private readonly state: () => TaskState,
  ) {}

  schedule(): void {
    this.timer ??= setTimeout(() => void this.sync(), 250);
  }

  /**
   * Brings the files up to date; resolves when they are on disk. A file that cannot be written
   * never fails the task: it is a projection, and a resumed task rewrites it.
   */
  sync(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.files.sync(this.state());
    return this.files.flushed().catch(() => {});
  }
}
