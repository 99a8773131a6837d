import { NotFoundError } from '../core/errors.js';
import { agentMailbox, type TaskMail, taskThread } from '../core/task-mail.js';
import { type MessageBus, openBus } from './bus.js';
import { HUMAN, isValidHandle } from './handle.js';
import { projectBusRoot } from './root.js';

export { taskThread };
export const agentHandle = agentMailbox;

/**
 * The project's bus: the root AMQ would find from the project (`--root`-less rules: AM_ROOT,
 * .amqrc, a repo-local .agent-mail), else `<project>/.agent-mail`, created on first use.
 *
 * The roster (meta/config.json) is written only when neither the root nor its base has one. A
 * roster that exists belongs to whoever made it (`bus setup`, another pipeline, a live session)
 * and is never rewritten: the engine's mail goes through without the roster check (a send to or
 * from a handle it does not list only warns, and the mailbox is made on delivery), because adding
 * the task's agents to it would put them in the live team (launch, `who`, the Team page).
 */
export function projectMail(projectRoot: string, agents: () => readonly string[]): TaskMail {
  let bus: MessageBus | undefined;
  const open = (): MessageBus => {
    if (bus) return bus;
    const resolved = projectBusRoot(projectRoot);
    const opened = openBus(resolved.root, {
      baseRoot: resolved.baseRoot,
      ...(resolved.session ? { session: resolved.session } : {}),
    });
    if (!opened.config()) {
      try {
        opened.init([...agents().map(agentHandle).filter(isValidHandle), HUMAN]);
      } catch (error) {
        if (!opened.config()) throw error; // else another process made the root meanwhile
      }
    }
    bus = opened;
    return bus;
  };
  return {
    askPerson({ taskId, agent, kind, subject, body, to, labels, context }) {
      open().send({
        from: agentHandle(agent),
        to: to ?? HUMAN,
        subject,
        kind,
        thread: taskThread(taskId),
        body,
        allowEmpty: true,
        ...(labels ? { labels } : {}),
        ...(context ? { context } : {}),
      });
    },
    drainInbox(agent) {
      const items = open().drain(agentHandle(agent), { includeBody: true, limit: 50 });
      return items
        .map((m) =>
          `From ${m.from} (${m.kind}${m.subject ? `: ${m.subject}` : ''}):\n${m.body ?? ''}`.trimEnd(),
        )
        .join('\n\n');
    },
    send({ taskId, from, to, subject, body }) {
      open().send({
        from: agentHandle(from),
        to: agentHandle(to),
        subject,
        kind: 'status',
        body,
        allowEmpty: true,
        context: { task: taskId },
      });
    },
    peekReplies(taskId, agent, from, since) {
      const listed = open().list(agentHandle(agent), {
        box: 'new',
        thread: taskThread(taskId),
        from,
        includeBody: true,
      });
      const after = Date.parse(since);
      return listed.items
        .filter((m) => Date.parse(m.created) >= after)
        .map((m) => ({ id: m.id, body: m.body ?? '' }));
    },
    markRead(agent, ids) {
      const b = open();
      for (const id of ids) readOnce(b, agentHandle(agent), id);
    },
    markAsksRead(taskId, agent) {
      const b = open();
      const asks = b.list(HUMAN, { box: 'new', thread: taskThread(taskId), from: agentHandle(agent) });
      for (const ask of asks.items) readOnce(b, HUMAN, ask.id);
    },
    takeReplies(taskId, agent, from = HUMAN) {
      const b = open();
      const handle = agentHandle(agent);
      const mine = b.list(handle, { box: 'new', thread: taskThread(taskId), from });
      return mine.items.map((m) => b.read(handle, m.id).body);
    },
  };
}

/** Moves a message to `cur`; one read meanwhile by another process is read either way. */
function readOnce(bus: MessageBus, handle: string, id: string): void {
  try {
    bus.read(handle, id);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
}
