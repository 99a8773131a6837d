/** The server's API, typed as the dashboard uses it (see /api/openapi.json). */

export type Status =
  | 'pending'
  | 'running'
  | 'awaiting_gate'
  | 'awaiting_human_input'
  | 'completed'
  | 'failed'
  | 'cancelled';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens?: number;
  cost_usd?: number;
}

export interface Waiting {
  kind: 'gate' | 'question';
  agent: string;
  stage: number | null;
  questions: string[];
}

export interface TaskRow {
  id: string;
  status: Status;
  pipeline: string;
  input: string;
  current_agent: string | null;
  running_agents: string[];
  created: string;
  updated: string;
  stage_count: number;
  usage: Usage;
  waiting: Waiting | null;
  error: string | null;
}

export interface Stage {
  n: number;
  agent: string;
  status: string;
  input: string;
  output: string;
  gate: { decision: 'approved' | 'rejected'; reason: string; by: string } | null;
  usage: Usage;
  attempt: number;
  duration_ms: number;
  error: { kind: string; message: string } | null;
  turn: { round: number; summary: boolean } | null;
  started: string | null;
  finished: string | null;
  /** The tier a routed stage (model/effort auto) ran on, and why it was recommended. */
  route: {
    tier: string;
    runtime: string;
    model: string | null;
    effort: string | null;
    recommended: { tier: string; reason: string };
  } | null;
}

export interface GraphNode {
  id: string;
  name: string;
  type: 'agent' | 'session';
  runtime: string | null;
  gate: string | null;
  human_input: string | null;
  participants: string[];
}

export interface GraphEdge {
  from: string;
  to: string;
  condition: string;
  kind: 'handoff' | 'participant';
}

export interface Graph {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

export interface Chunk {
  id: string;
  description: string;
  status: 'pending' | 'in_progress' | 'done';
  created_by: string;
  completed_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ChunkBoard {
  enabled: boolean;
  chunks: Chunk[];
  total: number;
  done: number;
}

export interface SessionRound {
  round: number;
  turns: { stage: number; agent: string; agreed: boolean | null }[];
  agreed: string[] | null;
  consensus: boolean | null;
}

export interface Session {
  activation: string;
  session: string;
  participants: string[];
  topic: string;
  rounds: SessionRound[];
  summary: { stage: number; agent: string } | null;
  outcome: 'consensus' | 'no_consensus' | null;
  stage: number | null;
  output: string | null;
}

/** An agent as written in the pipeline file. */
export type RawAgent = Record<string, unknown> & { id: string };

export interface AgentSaved {
  name: string;
  agent_id: string;
  content: string;
  diagnostics: Diagnostic[];
  graph: Graph;
}

export interface TaskDetail {
  id: string;
  status: Status;
  pipeline: string;
  input: string;
  created: string;
  updated: string;
  stages: (Stage | null)[];
  waiting: Waiting | null;
  error: string | null;
  usage: Usage;
  parent_task_id: string | null;
  running_agents: string[];
  graph: Graph;
  transcript: string;
  sessions: Session[];
  chunks: Chunk[];
  chunks_enabled: boolean;
  cancel_reason: string | null;
  last_seq: number;
}

export interface Diagnostic {
  severity: 'error' | 'warning';
  file: string | null;
  line: number;
  col: number;
  message: string;
  hint?: string;
}

export interface PipelineSummary {
  name: string;
  file: string;
  is_default: boolean;
  agent_count: number;
}

export interface PipelineDetail extends PipelineSummary {
  content: string;
  valid: boolean;
  diagnostics: Diagnostic[];
  features: string[];
  graph: Graph | null;
}

export interface Validation {
  valid: boolean;
  diagnostics: Diagnostic[];
  graph: Graph | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = text ? (JSON.parse(text) as unknown) : null;
  if (!response.ok) {
    const error = (json as { error?: { code: string; message: string } } | null)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? 'http',
      error?.message ?? response.statusText,
      (error ?? {}) as Record<string, unknown>,
    );
  }
  return json as T;
}

export const api = {
  tasks: (query: string) =>
    call<{ tasks: TaskRow[]; next_offset: number | null }>('GET', `/api/tasks${query ? `?${query}` : ''}`),
  task: (id: string) => call<TaskDetail>('GET', `/api/tasks/${encodeURIComponent(id)}`),
  run: (body: { pipeline?: string; input: string; params?: Record<string, string>; script?: string }) =>
    call<{ task_id: string }>('POST', '/api/run', body),
  fix: (parent: string, description: string) =>
    call<{ task_id: string }>('POST', '/api/fix', { parent_task_id: parent, description }),
  approve: (id: string, reason: string) => call('POST', `/api/tasks/${id}/approve`, { reason }),
  reject: (id: string, reason: string) => call('POST', `/api/tasks/${id}/reject`, { reason }),
  answer: (id: string, response: string) => call('POST', `/api/tasks/${id}/human-input`, { response }),
  cancel: (id: string, reason: string) => call('POST', `/api/tasks/${id}/cancel`, { reason }),
  restart: (id: string, fromStage: number) =>
    call('POST', `/api/tasks/${id}/restart`, { from_stage: fromStage }),
  pipelines: () => call<{ pipelines: PipelineSummary[]; default: string | null }>('GET', '/api/pipelines'),
  pipeline: (name: string) => call<PipelineDetail>('GET', `/api/pipelines/${encodeURIComponent(name)}`),
  savePipeline: (name: string, content: string) =>
    call<{ diagnostics: Diagnostic[] }>('PUT', `/api/pipelines/${encodeURIComponent(name)}`, { content }),
  setDefault: (name: string) => call('POST', '/api/pipelines/default', { name }),
  addChunk: (id: string, description: string) =>
    call<ChunkBoard>('POST', `/api/tasks/${id}/chunks`, { description }),
  chunkDone: (id: string, cid: string) =>
    call<ChunkBoard>('PATCH', `/api/tasks/${id}/chunks/${encodeURIComponent(cid)}`, { status: 'done' }),
  removeChunk: (id: string, cid: string) =>
    call<ChunkBoard>('DELETE', `/api/tasks/${id}/chunks/${encodeURIComponent(cid)}`),
  agents: (name: string) => call<RawAgent[]>('GET', `/api/pipelines/${encodeURIComponent(name)}/agents`),
  addAgent: (name: string, agent: Record<string, unknown>) =>
    call<AgentSaved>('POST', `/api/pipelines/${encodeURIComponent(name)}/agents`, agent),
  updateAgent: (name: string, id: string, fields: Record<string, unknown>) =>
    call<AgentSaved>(
      'PUT',
      `/api/pipelines/${encodeURIComponent(name)}/agents/${encodeURIComponent(id)}`,
      fields,
    ),
  removeAgent: (name: string, id: string) =>
    call<AgentSaved>('DELETE', `/api/pipelines/${encodeURIComponent(name)}/agents/${encodeURIComponent(id)}`),
  validate: (name: string, content: string) => call<Validation>('POST', '/api/validate', { name, content }),
};

/** troupe's event types, for EventSource listeners (named events only reach named listeners). */
export const EVENT_TYPES = [
  'task_created',
  'task_resumed',
  'task_restarted',
  'stage_started',
  'stage_output',
  'stage_completed',
  'stage_attempt_failed',
  'stage_interrupted',
  'gate_waiting',
  'gate_decided',
  'human_input_requested',
  'human_input_given',
  'handoff',
  'join',
  'session_started',
  'session_round_ended',
  'session_ended',
  'chunk_added',
  'chunk_updated',
  'chunk_removed',
  'task_completed',
  'task_failed',
  'task_cancelled',
] as const;

export interface LiveEvent {
  type: string;
  seq: number;
  taskId: string;
  at: string;
  stage?: number;
  text?: string;
}
