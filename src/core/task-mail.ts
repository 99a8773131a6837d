/**
 * What a running task does with the bus: every agent has a mailbox (its id, lower-cased) and
 * `user` is the person. A task waiting for a person writes to `user` on thread `task/<id>`;
 * the person's reply on that thread is how the task hears back. Agents read their unread mail
 * as `{{ inbox }}` and write with `SEND:`.
 */
export interface TaskMail {
  askPerson(input: {
    taskId: string;
    agent: string;
    kind: 'review_request' | 'question';
    subject: string;
    body: string;
  }): void;
  /** The agent's unread mail, consumed, as text for its prompt ('' when there is none). */
  drainInbox(agent: string): string;
  send(input: { taskId: string; from: string; to: string; subject: string; body: string }): void;
  /** The person's replies on the task's thread in the agent's inbox, consumed, oldest first. */
  takeReplies(taskId: string, agent: string): string[];
}
