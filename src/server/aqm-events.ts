import { eventTable, handleEvent } from '../core/event-table.js';
import type { StoredEvent } from '../core/events.js';

/**
 * aqm's SSE event names and payloads (reference/aqm.md §7) for the troupe events that have an
 * aqm counterpart, so front ends written for aqm keep working. troupe's own event follows each.
 */
export function aqmEvent(event: StoredEvent): AqmFrame | null {
  return handleEvent(AQM_FRAMES, event) ?? null;
}

interface AqmFrame {
  name: string;
  data: Record<string, unknown>;
}

const AQM_FRAMES = eventTable<AqmFrame | null>()(
  {
    stage_started: (event) => ({
      name: 'stage_start',
      data: { task_id: event.taskId, agent_id: event.agent, stage_number: event.stage },
    }),
    stage_output: (event) => ({
      name: 'stage_output',
      data: { task_id: event.taskId, stage_number: event.stage, text: event.text },
    }),
    stage_completed: (event) => ({
      name: 'stage_complete',
      data: {
        task_id: event.taskId,
        agent_id: event.agent,
        stage_number: event.stage,
        output_preview: event.output.slice(0, 200),
        gate_result: null,
      },
    }),
    gate_waiting: (event) => ({
      name: 'gate_waiting',
      data: { task_id: event.taskId, agent_id: event.agent, stage_number: event.stage },
    }),
    gate_decided: (event) =>
      event.by === 'human'
        ? {
            name: 'pipeline_resuming',
            data: { task_id: event.taskId, decision: event.decision, reason: event.reason },
          }
        : null,
    human_input_requested: (event) => ({
      name: 'human_input_request',
      data: { task_id: event.taskId, agent_id: event.agent, questions: event.questions, mode: event.mode },
    }),
    human_input_given: (event) =>
      event.by === 'human'
        ? { name: 'pipeline_resuming', data: { task_id: event.taskId, decision: 'human_input' } }
        : null,
    chunk_added: (event) => ({
      name: 'chunk_update',
      data: {
        task_id: event.taskId,
        action: 'add',
        chunk_id: event.chunk.id,
        description: event.chunk.description,
      },
    }),
    chunk_updated: (event) => ({
      name: 'chunk_update',
      data: { task_id: event.taskId, action: 'status', chunk_id: event.id, status: event.status },
    }),
    chunk_removed: (event) => ({
      name: 'chunk_update',
      data: { task_id: event.taskId, action: 'remove', chunk_id: event.id },
    }),
    task_completed: (event) => ({
      name: 'task_complete',
      data: { task_id: event.taskId, status: 'completed' },
    }),
    task_failed: (event) => ({
      name: 'task_failed',
      data: { task_id: event.taskId, error: event.reason, stage_number: event.stage },
    }),
    task_cancelled: (event) => ({
      name: 'task_cancelled',
      data: { task_id: event.taskId, reason: event.reason },
    }),
  },
  // no aqm counterpart: only troupe's own frame is sent
  [
    'task_created',
    'task_resumed',
    'entry_routed',
    'task_restarted',
    'stage_attempt_failed',
    'stage_interrupted',
    'stage_warning',
    'rate_limited',
    'mailbox_asked',
    'mailbox_replied',
    'mail_failed',
    'handoff',
    'join',
    'session_started',
    'session_round_ended',
    'session_ended',
    'isolation_chosen',
    'workspace_ready',
    'workspace_committed',
    'workspace_removed',
    'branch_workspace_ready',
    'branches_merged',
    'branch_conflict',
    'conflict_handled',
    'workspace_merged',
    'workspace_conflict',
    'workspace_merge_failed',
    'decision',
    'verified',
    'plan_expanded',
    'piece_started',
    'piece_failed',
    'piece_outside_paths',
    'plan_replanned',
    'task_sized',
    'spec_recorded',
    'output_rejected',
    'budget_warning',
    'task_parked',
  ],
);

export function isEnd(event: StoredEvent): boolean {
  return event.type === 'task_completed' || event.type === 'task_failed' || event.type === 'task_cancelled';
}

/**
 * The frames for one stored event: aqm's name first (no id), then troupe's with `id: seq`, in
 * one write, so a client that reconnects with Last-Event-ID resumes after the pair.
 */
export function framesFor(event: StoredEvent): string {
  const aqm = aqmEvent(event);
  const own = `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
  return aqm ? `event: ${aqm.name}\ndata: ${JSON.stringify(aqm.data)}\n\n${own}` : own;
}
