import { agentMailbox, type TaskMail, taskThread } from '../core/task-mail.js';
import { type MessageBus, openBus } from './bus.js';
import { HUMAN, isValidHandle } from './handle.js';
import { projectBusRoot } from './root.js';

export { taskThread };
export const agentHandle = agentMailbox;

/**
 * The project's bus: the root AMQ would find from the project (`--root`-less rules: AM_ROOT,
 * .amqrc, a repo-local .agent-mail), else `<project>/.agent-mail`, created on first use.
 */
export function projectMail(projectRoot: string, agents: () => readonly string[]): TaskMail {
  let bus: MessageBus | undefined;
  const open = (): MessageBus => {
    if (bus) return bus;
    bus = openBus(projectBusRoot(projectRoot).root);
    bus.init([...agents().map(agentHandle).filter(isValidHandle), HUMAN]);
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
      for (const id of ids) {
        try {
          b.read(agentHandle(agent), id);
        } catch {
          // read meanwhile by another process: it is read either way
        }
      }
    },
    takeReplies(taskId, agent, from = HUMAN) {
      const b = open();
      const handle = agentHandle(agent);
      const mine = b.list(handle, { box: 'new', thread: taskThread(taskId), from });
      return mine.items.map((m) => b.read(handle, m.id).body);
    },
  };
}
