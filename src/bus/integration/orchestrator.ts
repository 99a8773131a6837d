import type { BusKind, BusPriority } from '../../core/bus-vocabulary.js';
import type { MessageBus, SendResult } from '../bus.js';

/**
 * AMQ's integration messages (its adapter contract, v1): an external orchestrator's event as an
 * ordinary message the agent sends itself (from = to = me), so an agent that watches its own
 * inbox reacts without polling the orchestrator. Metadata lives under `context.orchestrator`
 * (`version`, `name`, `transport`, `event`, `workspace`, `task`); labels are `orchestrator`,
 * `orchestrator:<name>`, `task-state:<state>`, plus `handoff` (ready for review) or `blocking`
 * (failed, interrupted).
 */

export interface OrchestratorEvent {
  name: 'symphony' | 'kanban';
  transport: 'hook' | 'bridge';
  event: string;
  workspace?: Record<string, string>;
  task: Record<string, string> & { id: string };
  state?: string;
  flag?: 'handoff' | 'blocking';
  subject: string;
  body: string;
  kind: BusKind;
  priority: BusPriority;
}

export function orchestratorLabels(name: string, state: string | undefined, flag?: string): string[] {
  return [
    'orchestrator',
    `orchestrator:${name}`,
    ...(state ? [`task-state:${state}`] : []),
    ...(flag ? [flag] : []),
  ];
}

export function emitOrchestratorEvent(bus: MessageBus, me: string, e: OrchestratorEvent): SendResult {
  return bus.send({
    from: me,
    to: me,
    allowSelf: true,
    thread: `task/${e.task.id}`,
    subject: e.subject,
    kind: e.kind,
    priority: e.priority,
    labels: orchestratorLabels(e.name, e.state, e.flag),
    context: {
      orchestrator: {
        version: 1,
        name: e.name,
        transport: e.transport,
        event: e.event,
        ...(e.workspace ? { workspace: e.workspace } : {}),
        task: e.task,
      },
    },
    body: e.body,
  });
}
