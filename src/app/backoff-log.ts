/**
 * Error lines that repeat while a database is away, written with an exponential backoff per kind
 * of error: the first at once, then at most one per 1, 2, 4 … 60 s, each saying how many of its
 * kind were held back ("(N more)"). A kind quiet for longer than the longest pause starts over.
 * Without it a worker wrote about 2.7 lines a second for as long as PostgreSQL was down.
 */

const FIRST_PAUSE_MS = 1000;
const LONGEST_PAUSE_MS = 60_000;

interface KindState {
  /** When the next line of this kind may be written. */
  next: number;
  pause: number;
  held: number;
  last: number;
}

export class BackoffLog {
  private readonly kinds = new Map<string, KindState>();

  constructor(
    private readonly write: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Writes `line` unless a line of its `kind` was written too recently; counts it then. */
  report(kind: string, line: string): void {
    const at = this.now();
    let state = this.kinds.get(kind);
    if (!state || at - state.last > LONGEST_PAUSE_MS * 2) {
      state = { next: at, pause: FIRST_PAUSE_MS, held: 0, last: at };
      this.kinds.set(kind, state);
    }
    state.last = at;
    if (at < state.next) {
      state.held++;
      return;
    }
    this.write(state.held ? `${line} (${state.held} more)` : line);
    state.held = 0;
    state.next = at + state.pause;
    state.pause = Math.min(state.pause * 2, LONGEST_PAUSE_MS);
  }

  /** An error's line, its kind told by its code (ECONNREFUSED) or else its message without numbers. */
  error(source: string, error: Error): void {
    const code = (error as { code?: unknown }).code;
    const kind = typeof code === 'string' && code ? code : error.message.replace(/\d+/g, '#');
    this.report(`${source}: ${kind}`, `${source}: ${error.message}`);
  }
}
