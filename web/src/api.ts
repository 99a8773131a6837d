/**
 * The server's API as the dashboard uses it. The types are the route declarations' own
 * (src/server/api/), imported as types only: nothing of zod reaches the bundle.
 */
import type { z } from 'zod';
import type { StoredEvent } from '../../src/core/events';
import type * as B from '../../src/server/api/bus';
import type { Answer } from '../../src/server/api/define';
import type * as P from '../../src/server/api/pipelines';
import type * as R from '../../src/server/api/registry';
import type { runApi } from '../../src/server/api/run';
import type * as T from '../../src/server/api/tasks';
import type * as W from '../../src/server/api/workers';

export type Status = z.infer<typeof T.TaskStatus>;
export type Usage = z.infer<typeof T.Usage>;
export type Waiting = z.infer<typeof T.Waiting>;
export type TaskRow = z.infer<typeof T.TaskRow>;
export type TaskPage = z.infer<typeof T.TaskPage>;
export type Stage = z.infer<typeof T.Stage>;
export type TaskDetail = z.infer<typeof T.TaskDetail>;
export type Chunk = z.infer<typeof T.Chunk>;
export type ChunkBoard = z.infer<typeof T.ChunkBoard>;
export type Session = z.infer<typeof T.Session>;
export type SessionRound = z.infer<typeof T.SessionRound>;
export type Graph = z.infer<typeof P.Graph>;
export type GraphNode = z.infer<typeof P.GraphNode>;
export type GraphEdge = z.infer<typeof P.GraphEdge>;
export type Diagnostic = z.infer<typeof P.Diagnostic>;
export type PipelineSummary = z.infer<typeof P.PipelineSummary>;
export type PipelineDetail = z.infer<typeof P.PipelineDetail>;
export type PipelineSaved = z.infer<typeof P.PipelineSaved>;
export type AgentFields = z.input<typeof P.AgentFields>;
export type AgentSaved = z.infer<typeof P.AgentSaved>;
export type Validation = z.infer<typeof P.Validation>;
export type RunRequest = z.input<typeof runApi.run.body>;
export type Roster = z.infer<typeof B.Roster>;
export type RosterEntry = z.infer<typeof B.RosterEntry>;
export type BusInbox = z.infer<typeof B.BusInbox>;
export type BusMessage = z.infer<typeof B.BusMessage>;
export type BusMessageDetail = z.infer<typeof B.BusMessageDetail>;
export type BusSend = z.input<typeof B.busApi.send.body>;
export type BusReply = z.input<typeof B.busApi.reply.body>;
export type BusSent = z.infer<typeof B.BusSent>;
export type WorkerList = z.infer<typeof W.WorkerList>;
export type QueueSummary = z.infer<typeof W.QueueSummary>;
export type RegistryCatalog = z.infer<typeof R.RegistryCatalog>;
export type RegistryPipeline = z.infer<typeof R.RegistryPipeline>;
export type RegistryPulled = z.infer<typeof R.RegistryPulled>;

/** An agent as written in the pipeline file. */
export type RawAgent = Record<string, unknown> & { id: string };

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
  tasks: (query: string) => call<TaskPage>('GET', `/api/tasks${query ? `?${query}` : ''}`),
  task: (id: string) => call<TaskDetail>('GET', `/api/tasks/${encodeURIComponent(id)}`),
  run: (body: RunRequest) => call<Answer<typeof runApi.run, 202>>('POST', '/api/run', body),
  fix: (parent: string, description: string) =>
    call<Answer<typeof runApi.fix, 202>>('POST', '/api/fix', { parent_task_id: parent, description }),
  approve: (id: string, reason: string) =>
    call('POST', `/api/tasks/${id}/approve`, { reason, via: 'dashboard' }),
  reject: (id: string, reason: string) =>
    call('POST', `/api/tasks/${id}/reject`, { reason, via: 'dashboard' }),
  answer: (id: string, response: string) => call('POST', `/api/tasks/${id}/human-input`, { response }),
  cancel: (id: string, reason: string) => call('POST', `/api/tasks/${id}/cancel`, { reason }),
  resume: (id: string) => call('POST', `/api/tasks/${id}/resume`, {}),
  restart: (id: string, fromStage: number) =>
    call('POST', `/api/tasks/${id}/restart`, { from_stage: fromStage }),
  pipelines: () => call<Answer<typeof P.pipelineApi.list, 200>>('GET', '/api/pipelines'),
  pipeline: (name: string) => call<PipelineDetail>('GET', `/api/pipelines/${encodeURIComponent(name)}`),
  savePipeline: (name: string, content: string) =>
    call<PipelineSaved>('PUT', `/api/pipelines/${encodeURIComponent(name)}`, { content }),
  setDefault: (name: string) => call('POST', '/api/pipelines/default', { name }),
  addChunk: (id: string, description: string) =>
    call<Answer<typeof T.taskApi.addChunk, 201>>('POST', `/api/tasks/${id}/chunks`, { description }),
  chunkDone: (id: string, cid: string) =>
    call<Answer<typeof T.taskApi.chunkDone, 200>>(
      'PATCH',
      `/api/tasks/${id}/chunks/${encodeURIComponent(cid)}`,
      { status: 'done' },
    ),
  removeChunk: (id: string, cid: string) =>
    call<Answer<typeof T.taskApi.removeChunk, 200>>(
      'DELETE',
      `/api/tasks/${id}/chunks/${encodeURIComponent(cid)}`,
    ),
  agents: (name: string) => call<RawAgent[]>('GET', `/api/pipelines/${encodeURIComponent(name)}/agents`),
  addAgent: (name: string, agent: AgentFields & { id: string }) =>
    call<AgentSaved>('POST', `/api/pipelines/${encodeURIComponent(name)}/agents`, agent),
  updateAgent: (name: string, id: string, fields: AgentFields) =>
    call<AgentSaved>(
      'PUT',
      `/api/pipelines/${encodeURIComponent(name)}/agents/${encodeURIComponent(id)}`,
      fields,
    ),
  removeAgent: (name: string, id: string) =>
    call<AgentSaved>('DELETE', `/api/pipelines/${encodeURIComponent(name)}/agents/${encodeURIComponent(id)}`),
  validate: (name: string, content: string) => call<Validation>('POST', '/api/validate', { name, content }),
  registry: (query: string) =>
    call<RegistryCatalog>('GET', `/api/registry${query ? `?query=${encodeURIComponent(query)}` : ''}`),
  pullFromRegistry: (name: string, version: string, force: boolean) =>
    call<RegistryPulled>('POST', `/api/registry/${encodeURIComponent(name)}/pull`, {
      version,
      ...(force ? { force } : {}),
    }),
  workers: () => call<WorkerList>('GET', '/api/workers'),
  queue: () => call<QueueSummary>('GET', '/api/queue'),
  roster: (session: string) => call<Roster>('GET', `/api/bus/roster${inSession(session)}`),
  inbox: (handle: string, session: string) =>
    call<BusInbox>('GET', `/api/bus/mailboxes/${encodeURIComponent(handle)}/inbox${inSession(session)}`),
  message: (handle: string, id: string, session: string) =>
    call<BusMessageDetail>(
      'GET',
      `/api/bus/mailboxes/${encodeURIComponent(handle)}/inbox/${encodeURIComponent(id)}${inSession(session)}`,
    ),
  send: (body: BusSend, session: string) => call<BusSent>('POST', `/api/bus/send${inSession(session)}`, body),
  reply: (body: BusReply, session: string) =>
    call<BusSent>('POST', `/api/bus/reply${inSession(session)}`, body),
};

/** `?session=` when one is picked; none: the root the bus commands find. */
function inSession(session: string): string {
  return session ? `?session=${encodeURIComponent(session)}` : '';
}

/** An event of the live streams: the stored event (core/events.ts). */
export type LiveEvent = StoredEvent;
