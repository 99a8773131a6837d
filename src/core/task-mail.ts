/**
 * What a running task does with the bus: every agent has a mailbox (its id, lower-cased) and
 * `user` is the person. A task waiting for a person writes to `user` on thread `task/<id>`;
 * the person's reply on that thread is how the task hears back. A mailbox agent's stage is
 * mailed the same way to its handle, and its reply is the stage's output. Agents read their unread mail
 * as `{{ inbox }}` and write with `SEND:`.
 */
export interface TaskMail {
  askPerson(input: {
    taskId: string;
    agent: string;
    kind: 'review_request' | 'question';
    subject: string;
    body: string;
    /** Who is asked: `user` unless a mailbox agent's stage goes to its handle. */
    to?: string;
    labels?: string[];
    /** AMQ's free-form `context` object: what the recipient needs to answer. */
    context?: Record<string, unknown>;
  }): void;
  /** The agent's unread mail, consumed, as text for its prompt ('' when there is none). */
  drainInbox(agent: string): string;
  send(input: { taskId: string; from: string; to: string; subject: string; body: string }): void;
  /** Replies on the task's thread in the agent's inbox from `from` (default `user`), consumed, oldest first. */
  takeReplies(taskId: string, agent: string, from?: string): string[];
  /**
   * The same, unread ones sent at or after `since` (ISO), left unread: a mailbox agent's reply is
   * recorded first and marked read after (`markRead`), so a crash between the two loses nothing.
   */
  peekReplies(
    taskId: string,
    agent: string,
    from: string,
    since: string,
  ): Array<{ id: string; body: string }>;
  markRead(agent: string, ids: string[]): void;
  /**
   * The person's unread asks from `agent` on the task's thread (a gate's review request, a
   * question), marked read (AMQ: new → cur): what they asked for is recorded, however it came.
   */
  markAsksRead(taskId: string, agent: string): void;
}

/** The person's mailbox: where gates and questions go, and who replies on a task's thread. */
export const PERSON_MAILBOX = 'user';

/** The bus thread of a task: its mail to people and mailbox agents, and their replies. */
export function taskThread(taskId: string): string {
  return `task/${taskId}`;
}

/** An agent's mailbox on the bus: its id, lower-cased, anything but [a-z0-9_-] made `-`. */
export function agentMailbox(agent: string): string {
  return agent
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '-');
}
