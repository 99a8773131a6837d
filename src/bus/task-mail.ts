import type { TaskMail } from '../core/task-mail.js';
import { type MessageBus, openBus } from './bus.js';
import { HUMAN, isValidHandle, normalizeHandle } from './handle.js';
import { projectBusRoot } from './root.js';

export function taskThread(taskId: string): string {
  return `task/${taskId}`;
}

export function agentHandle(agent: string): string {
  return normalizeHandle(agent).replace(/[^a-z0-9_-]/g, '-');
}

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
    askPerson({ taskId, agent, kind, subject, body }) {
      open().send({
        from: agentHandle(agent),
        to: HUMAN,
        subject,
        kind,
        thread: taskThread(taskId),
        body,
        allowEmpty: true,
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
    takeReplies(taskId, agent) {
      const b = open();
      const handle = agentHandle(agent);
      const mine = b.list(handle, { box: 'new', thread: taskThread(taskId), from: HUMAN });
      return mine.items.map((m) => b.read(handle, m.id).body);
    },
  };
}
