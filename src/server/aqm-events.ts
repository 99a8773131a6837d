import type { StoredEvent } from '../core/events.js';

/**
 * aqm's SSE event names and payloads (reference/aqm.md §7) for the troupe events that have an
 * aqm counterpart, so front ends written for aqm keep working. troupe's own event follows each.
 */
export function aqmEvent(event: StoredEvent): { name: string; data: Record<string, unknown> } | null {
  const task_id = event.taskId;
  switch (event.type) {
    case 'stage_started':
      return { name: 'stage_start', data: { task_id, agent_id: event.agent, stage_number: event.stage } };
    case 'stage_output':
      return { name: 'stage_output', data: { task_id, stage_number: event.stage, text: event.text } };
    case 'stage_completed':
      return {
        name: 'stage_complete',
        data: {
          task_id,
          agent_id: event.agent,
          stage_number: event.stage,
          output_preview: event.output.slice(0, 200),
          gate_result: null,
        },
      };
    case 'gate_waiting':
      return { name: 'gate_waiting', data: { task_id, agent_id: event.agent, stage_number: event.stage } };
    case 'gate_decided':
      return event.by === 'human'
        ? { name: 'pipeline_resuming', data: { task_id, decision: event.decision, reason: event.reason } }
        : null;
    case 'human_input_requested':
      return {
        name: 'human_input_request',
        data: { task_id, agent_id: event.agent, questions: event.questions, mode: event.mode },
      };
    case 'human_input_given':
      return event.by === 'human'
        ? { name: 'pipeline_resuming', data: { task_id, decision: 'human_input' } }
        : null;
    case 'chunk_added':
      return {
        name: 'chunk_update',
        data: { task_id, action: 'add', chunk_id: event.chunk.id, description: event.chunk.description },
      };
    case 'chunk_updated':
      return {
        name: 'chunk_update',
        data: { task_id, action: 'status', chunk_id: event.id, status: event.status },
      };
    case 'chunk_removed':
      return { name: 'chunk_update', data: { task_id, action: 'remove', chunk_id: event.id } };
    case 'task_completed':
      return { name: 'task_complete', data: { task_id, status: 'completed' } };
    case 'task_failed':
      return { name: 'task_failed', data: { task_id, error: event.reason, stage_number: event.stage } };
    case 'task_cancelled':
      return { name: 'task_cancelled', data: { task_id, reason: event.reason } };
    default:
      return null;
  }
}

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
