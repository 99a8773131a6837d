import { createInterface, type Interface } from 'node:readline';
import { pieceDiffs } from '../app/piece-diffs.js';
import type { Project } from '../app/project.js';
import { taskJson } from '../app/task-view.js';
import { mailboxWaits, type TaskState, waitingFor } from '../engine/fold/task-state.js';
import { parseVerdict } from '../pipeline/lang/human-verdict.js';
import { personAtTerminal } from './decider.js';
import { exitCodeForTask } from './exit-codes.js';
import { liveOutput } from './live-output.js';
import { printJson } from './options.js';

export interface ForegroundOptions {
  json: boolean;
  /** Ask the person here when the task waits, instead of exiting (default: on a terminal). */
  interactive?: boolean;
}

/** Runs a task here until it ends or waits, showing progress (or JSON at the end); returns the exit code. */
export async function runForeground(
  project: Project,
  taskId: string,
  options: ForegroundOptions,
): Promise<number> {
  if (!options.json) process.stderr.write(`troupe ${taskId} · .troupe/tasks/${taskId}/\n`);
  const interactive =
    options.interactive ?? (!options.json && process.stdin.isTTY === true && process.stderr.isTTY === true);
  const observer = options.json ? undefined : liveOutput();
  let state = await project.tasks.continue(taskId, observer);
  const prompt = interactive ? new PersonAtPrompt() : null;
  try {
    for (;;) {
      if (waitsOnBus(state)) {
        if (!(await awaitMailboxReply(project, state, options.json))) {
          state = project.tasks.state(taskId); // another process took the task up
          break;
        }
      } else if (!prompt || !waitingFor(state) || !(await prompt.answer(project, state))) break;
      state = await project.tasks.continue(taskId, observer);
    }
  } finally {
    prompt?.close();
  }
  if (options.json) printJson(taskJson(state, null, null, await pieceDiffs(state)));
  else {
    const waiting = waitingFor(state);
    if (waiting) {
      process.stderr.write(
        `⏸ ${taskId} is waiting for you (${waiting.kind} at ${waiting.agent}); it holds no process.\n`,
      );
    }
  }
  return exitCodeForTask(state);
}

/** How often a foreground run looks for a mailbox agent's reply. */
const MAIL_POLL_MS = 500;

function waitsOnBus(state: TaskState): boolean {
  return state.status === 'waiting' && mailboxWaits(state).length > 0;
}

/**
 * A mailbox agent's stage: this process looks for the reply (or the stage's timeout) every
 * MAIL_POLL_MS, the same TaskService.takeMailReplies `troupe resume` and the server use; killed
 * meanwhile, the task waits on, and `troupe resume` carries it on once the reply is there.
 */
async function awaitMailboxReply(project: Project, state: TaskState, quiet: boolean): Promise<boolean> {
  if (!quiet) {
    for (const wait of mailboxWaits(state))
      process.stderr.write(
        `⏸ ${state.id} is waiting for ${wait.handle} on the bus (${wait.agent}, stage ${wait.stage})\n`,
      );
  }
  for (;;) {
    if (project.tasks.takeMailReplies(state.id)) return true;
    if (!waitsOnBus(project.tasks.state(state.id))) return false;
    await new Promise((resolve) => setTimeout(resolve, MAIL_POLL_MS));
  }
}

/** Asks at the terminal (or whatever stdin is) what a waiting task needs; false at end of input. */
class PersonAtPrompt {
  private readonly rl: Interface = createInterface({ input: process.stdin, output: process.stderr });
  private readonly lines: string[] = [];
  private readonly waiters: Array<(line: string | null) => void> = [];
  private ended = false;

  constructor() {
    this.rl.on('line', (line) => {
      const waiter = this.waiters.shift();
      if (waiter) waiter(line);
      else this.lines.push(line);
    });
    this.rl.on('close', () => {
      this.ended = true;
      for (const waiter of this.waiters.splice(0)) waiter(null);
    });
  }

  async answer(project: Project, state: TaskState): Promise<boolean> {
    const waiting = waitingFor(state)!;
    if (waiting.kind === 'question') {
      for (const q of waiting.questions) process.stderr.write(`? ${waiting.agent}: ${q}\n`);
      const answer = await this.ask('> ');
      if (answer === null) return false;
      project.tasks.answer(state.id, answer);
      return true;
    }
    const verdict = await this.verdict(`approve ${waiting.agent}'s output (stage ${waiting.stage})? [y/n] `);
    if (verdict === null) return false;
    if (verdict.decision === 'approved') {
      project.tasks.decideGate(state.id, 'approved', verdict.reason, personAtTerminal());
      return true;
    }
    // `n: too long` gives the reason at once
    const reason = verdict.reason || (await this.ask('why (the agent gets this)? '));
    if (reason === null || !reason.trim()) return false;
    project.tasks.decideGate(state.id, 'rejected', reason, personAtTerminal());
    return true;
  }

  close(): void {
    this.rl.close();
  }

  /** y or n (yes, no, approve, reject: …); anything else, an empty line included, is asked again. */
  private async verdict(question: string): Promise<ReturnType<typeof parseVerdict>> {
    for (let prompt = question; ; prompt = 'please answer y (approve) or n (reject): ') {
      const answer = await this.ask(prompt);
      if (answer === null) return null;
      const verdict = parseVerdict(answer);
      if (verdict) return verdict;
    }
  }

  private ask(question: string): Promise<string | null> {
    process.stderr.write(question);
    const queued = this.lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
