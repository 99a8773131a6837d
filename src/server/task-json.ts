import type { PieceDiffs } from '../app/piece-diffs.js';
import { type TaskOwner, taskJson } from '../app/task-view.js';
import type { TaskSummary } from '../core/event-store.js';
import type { TaskState } from '../engine/fold/task-state.js';
import { waitingFor } from '../engine/fold/task-state.js';
import { usesChunks } from '../engine/plan/chunks.js';
import type { Session, TaskDetail, TaskRow } from './api/tasks.js';
import { pipelineGraph } from './pipeline-files.js';

/** A row of the task list: the summary plus what the dashboard shows live (usage, waiting, elapsed). */
export function taskRow(
  summary: TaskSummary,
  state: TaskState,
  owner: TaskOwner | null,
  noWorker: string | null = null,
): TaskRow {
  const running = [...state.activations.values()].filter((a) => a.status === 'running').map((a) => a.agent);
  return {
    id: summary.id,
    status: summary.status,
    pipeline: summary.pipeline,
    input: summary.input,
    current_agent: summary.currentAgent,
    running_agents: running,
    created: summary.created,
    updated: summary.updated,
    stage_count: state.stages.filter(Boolean).length,
    usage: state.usage,
    waiting: waitingFor(state),
    error: state.failure?.reason ?? null,
    parent_task_id: state.parentTaskId,
    issue: state.issue,
    owner,
    no_worker: noWorker,
  };
}

/**
 * The task as the CLI's `--json` shows it (`owner`: as `taskOwner` reads it; `plan` with the
 * pieces' `diffs`), plus the graph, transcript and what runs right now.
 */
export function taskDetail(
  state: TaskState,
  sessions: Session[] = [],
  owner: TaskOwner | null = null,
  noWorker: string | null = null,
  diffs?: PieceDiffs,
): TaskDetail {
  const base = taskJson(state, owner, noWorker, diffs);
  return {
    ...base,
    stages: base.stages.map((s, i) => {
      const record = state.stages[i];
      return {
        ...s,
        turn: record?.turn ?? null,
        started: record?.startedAt ?? null,
        finished: record?.finishedAt ?? null,
      };
    }),
    parent_task_id: state.parentTaskId,
    start_agent: state.startAgent,
    running_agents: [...state.activations.values()].filter((a) => a.status === 'running').map((a) => a.agent),
    graph: pipelineGraph(state.definition),
    transcript: state.transcript,
    sessions,
    chunks: state.chunks,
    chunks_enabled: usesChunks(state.definition),
    cancel_reason: state.cancelReason,
    last_seq: state.lastSeq,
  };
}
