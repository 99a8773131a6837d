import { z } from 'zod';
import { TASK_STATUSES } from '../../core/events.js';
import { TASK_SIZES } from '../../core/spec.js';
import { commaList, json, named, nonBlank, queryInt, route, withAliases } from './define.js';
import { Graph } from './pipelines.js';

/** Tasks: list, detail, a person's decisions, cancel, restart, chunks (each task's events: events.ts). */

export const TaskStatus = named('TaskStatus', z.enum(TASK_STATUSES));

export const Usage = named(
  'Usage',
  z.strictObject({
    input_tokens: z.int(),
    output_tokens: z.int(),
    cache_read_tokens: z.int().optional(),
    cost_usd: z.number().optional(),
    cost_estimated: z.boolean().optional().describe("the cost is troupe's estimate from its price table"),
    unknown: z.boolean().optional().describe('nothing was measured (a mailbox agent)'),
  }),
);

/** A mailbox agent's stage waiting for its reply on the bus. */
export const MailboxWaiting = named(
  'MailboxWaiting',
  z.strictObject({
    agent: z.string(),
    stage: z.int(),
    handle: z.string(),
    thread: z.string(),
    asked_at: z.string(),
    deadline: z.string().nullable(),
  }),
);

/** Mail the task wrote that was not delivered (`mail_failed`), or replies that could not be read (kind `reply`). */
export const MailFailure = named(
  'MailFailure',
  z.strictObject({
    to: z.string(),
    kind: z.string(),
    subject: z.string(),
    reason: z.string(),
    at: z.string(),
  }),
);

/** What a task waits for a person for. */
export const Waiting = named(
  'Waiting',
  z.strictObject({
    kind: z.enum(['gate', 'question']),
    agent: z.string(),
    stage: z.int().nullable(),
    questions: z.array(z.string()),
  }),
);

/** The process that runs a task under its lease (null when none does). */
export const TaskOwner = named(
  'TaskOwner',
  z
    .strictObject({ pid: z.int(), host: z.string(), alive: z.boolean() })
    .describe(
      'alive false: the process is gone (killed, or its lease expired); `troupe resume` or POST …/resume carries the task on',
    ),
);

/** The tracker issue a task works on (`troupe watch`), as its task_created records it. */
export const TaskIssue = named(
  'TaskIssue',
  z
    .strictObject({
      source: z.string().describe('the tracker: `github:owner/repo`, `linear:slug`, `backlog:/path`'),
      id: z.string().describe("the tracker's own id of the issue"),
      identifier: z.string().meta({ examples: ['#12', 'ENG-42'] }),
      url: z
        .string()
        .nullable()
        .describe("the issue's page, as the tracker gave it (not checked: may be any scheme)"),
      state: z.string().describe("the issue's state when the task started"),
    })
    .describe("the tracker's text: hostile, shown as text only"),
);

export const TaskRow = named(
  'TaskRow',
  z.strictObject({
    id: z.string(),
    status: TaskStatus,
    pipeline: z.string(),
    input: z.string(),
    current_agent: z.string().nullable(),
    running_agents: z.array(z.string()),
    created: z.string(),
    updated: z.string(),
    stage_count: z.int(),
    usage: Usage,
    waiting: Waiting.nullable(),
    error: z.string().nullable(),
    parent_task_id: z.string().nullable(),
    issue: TaskIssue.nullable(),
    owner: TaskOwner.nullable(),
    no_worker: z
      .string()
      .nullable()
      .describe(
        'why no worker of the work queue takes the task (none is running, none serves its runtime); null: none is needed, or one takes it',
      ),
  }),
);

export const TaskPage = named(
  'TaskPage',
  z.strictObject({
    tasks: z.array(TaskRow),
    limit: z.int(),
    offset: z.int(),
    next_offset: z.int().nullable(),
  }),
);

export const Stage = named(
  'Stage',
  z.strictObject({
    n: z.int(),
    agent: z.string(),
    status: z.enum(['running', 'completed', 'failed', 'interrupted', 'cancelled', 'awaiting_gate']),
    input: z.string(),
    output: z.string(),
    gate: z
      .strictObject({
        decision: z.enum(['approved', 'rejected']),
        reason: z.string(),
        by: z.string(),
        /** A person's verdict: how it came (cli, api, dashboard, mail) and who gave it there. */
        from: z
          .strictObject({ channel: z.enum(['cli', 'api', 'dashboard', 'mail']), who: z.string() })
          .nullable(),
      })
      .nullable(),
    usage: Usage,
    attempt: z.int(),
    duration_ms: z.number(),
    error: z
      .strictObject({
        kind: z.string(),
        message: z.string(),
        hint: z.string().optional().describe('what the user can do about it'),
      })
      .nullable(),
    warnings: z.array(z.string()).describe("what the agent's CLI warned about during the stage"),
    route: z
      .strictObject({
        tier: z.string(),
        recommended: z.strictObject({ tier: z.string(), reason: z.string() }),
        runtime: z.string(),
        model: z.string().nullable(),
        effort: z.string().nullable(),
      })
      .nullable()
      .describe('the tier a routed stage (model or effort auto) ran on, and why it was recommended'),
    turn: z.strictObject({ round: z.int(), summary: z.boolean() }).nullable(),
    started: z.string().nullable(),
    finished: z.string().nullable(),
  }),
);

export const Chunk = named(
  'Chunk',
  z.strictObject({
    id: z.string(),
    description: z.string(),
    status: z.enum(['pending', 'in_progress', 'done']),
    created_by: z.string().describe('"config", "user" or the id of the agent that added it'),
    completed_by: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  }),
);

export const ChunkBoard = named(
  'ChunkBoard',
  z.strictObject({
    enabled: z.boolean().describe("false: the task's pipeline has no `chunks:` block"),
    chunks: z.array(Chunk),
    total: z.int(),
    done: z.int(),
  }),
);

const SessionTurn = z.strictObject({
  stage: z.int(),
  agent: z.string(),
  agreed: z
    .boolean()
    .nullable()
    .describe("whether the speaker's turn carried the vote; null until the round has ended"),
});

export const SessionRound = z.strictObject({
  round: z.int(),
  turns: z.array(SessionTurn),
  agreed: z.array(z.string()).nullable().describe('who voted to agree (null while the round runs)'),
  consensus: z.boolean().nullable(),
});

/** A session round by round, from the event log. */
export const Session = named(
  'Session',
  z.strictObject({
    activation: z.string(),
    session: z.string(),
    participants: z.array(z.string()),
    topic: z.string(),
    rounds: z.array(SessionRound),
    summary: z
      .strictObject({ stage: z.int(), agent: z.string() })
      .nullable()
      .describe("the summary agent's closing turn"),
    outcome: z.enum(['consensus', 'no_consensus']).nullable().describe('null while the session runs'),
    stage: z.int().nullable(),
    output: z.string().nullable(),
  }),
);
export type Session = z.infer<typeof Session>;

/** A piece of a plan and where it is (docs/task-graphs.md): waiting for its dependencies, ready, running, merging, merged, failed. */
export const PieceStatus = named(
  'PieceStatus',
  z.enum(['waiting', 'ready', 'running', 'merging', 'merged', 'failed']),
);

/** A piece of a planner's plan: its place in the graph and what became of it. */
export const PlanPiece = named(
  'PlanPiece',
  z.strictObject({
    id: z.string(),
    goal: z.string(),
    status: PieceStatus,
    depends_on: z.array(z.string()).describe('the pieces merged before it starts (the edges of the graph)'),
    level: z.int().describe('0 for a piece that depends on none, else one more than its deepest dependency'),
    paths: z.array(z.string()).describe('what it may write (a folder ends with /)'),
    size: z.enum(TASK_SIZES).nullable(),
    labels: z.array(z.string()),
    round: z.int().describe('the plan round it came from'),
    stages: z
      .array(z.int())
      .describe('the stages that worked on it (its worker, and what its handoffs started)'),
    verdict: z
      .strictObject({
        decision: z.enum(['approved', 'rejected']),
        by: z.string(),
        reason: z.string(),
        stage: z.int(),
      })
      .nullable()
      .describe("the latest gate verdict on its worker's stages (the plan's verifier, or its checks)"),
    tier: z
      .strictObject({
        tier: z.string(),
        runtime: z.string(),
        model: z.string().nullable(),
        effort: z.string().nullable(),
      })
      .nullable()
      .describe('the tier its latest routed stage ran on (by its size and labels)'),
    branch: z.string().nullable().describe("its worktree's branch, once made"),
    worktree: z.string().nullable(),
    diff: z
      .strictObject({ files: z.int(), insertions: z.int(), deletions: z.int() })
      .nullable()
      .describe('what its branch changed since it started (null: no worktree yet, or git lacks the commits)'),
    usage: Usage,
    outside: z.array(z.string()).describe('files it changed outside its paths (found before its merge)'),
    failure: z.strictObject({ reason: z.string(), stage: z.int().nullable() }).nullable(),
  }),
);

/** A planner's plan, as the task graph it expanded into. */
export const Plan = named(
  'Plan',
  z.strictObject({
    round: z.int().describe('1 for the first plan, one more for each re-plan'),
    planner: z.string(),
    worker: z.string().nullable().describe("the agent that starts each piece (a sub-pipeline's first agent)"),
    pipeline: z
      .string()
      .nullable()
      .describe('the sub-pipeline that runs each piece (plan.pipeline), or null'),
    verifier: z.string().nullable(),
    replans: z.int(),
    warnings: z.array(z.string()),
    pieces: z.array(PlanPiece).describe("every round's pieces: a re-plan keeps those already merged"),
  }),
);

export const TaskDetail = named(
  'TaskDetail',
  z.strictObject({
    id: z.string(),
    status: TaskStatus,
    pipeline: z.string(),
    input: z.string(),
    created: z.string(),
    updated: z.string(),
    stages: z.array(Stage.nullable()),
    size: z.strictObject({ size: z.enum(TASK_SIZES), by: z.string() }).nullable(),
    spec: z
      .strictObject({
        stage: z.int(),
        agent: z.string(),
        // the agent's own JSON: these three, and whatever else it wrote
        spec: z.looseObject({
          requirements: z.array(z.string()),
          files: z.array(z.string()),
          verification: z.array(z.string()),
        }),
      })
      .nullable(),
    workspace: z.strictObject({
      isolation: z.enum(['worktree', 'none']),
      why: z.string().nullable(),
      path: z.string().nullable(),
      branch: z.string().nullable(),
      base: z.string().nullable(),
      merged: z.string().nullable(),
      unmerged: z.string().nullable(),
      removed: z.boolean().describe('its worktree and branch were removed once merged'),
    }),
    waiting: Waiting.nullable(),
    mailbox: z.array(MailboxWaiting),
    mail_failed: z.array(MailFailure),
    error: z.string().nullable(),
    parked: z
      .strictObject({ reason: z.string(), failures: z.int(), at: z.string() })
      .nullable()
      .describe(
        'parked: its runs failed past the queue retry limit (the last error, how many, when); POST …/resume runs it again',
      ),
    hint: z
      .string()
      .nullable()
      .describe('what the user can do about the failure, or about an owner that is gone, where troupe knows'),
    owner: TaskOwner.nullable(),
    no_worker: z
      .string()
      .nullable()
      .describe(
        'why no worker of the work queue takes the task (none is running, none serves its runtime); null: none is needed, or one takes it',
      ),
    parent: z.string().nullable().describe("the CLI's name (`status --json`) for parent_task_id"),
    issue: TaskIssue.nullable(),
    usage: Usage,
    parent_task_id: z.string().nullable(),
    start_agent: z.string().nullable(),
    running_agents: z.array(z.string()),
    graph: Graph,
    transcript: z.string(),
    sessions: z.array(Session),
    chunks: z.array(Chunk),
    chunks_enabled: z.boolean(),
    cancel_reason: z.string().nullable(),
    last_seq: z.int(),
    plan: Plan.nullable().describe("the planner's plan as a graph, once one expanded (docs/task-graphs.md)"),
  }),
);

/** The task runs on in the background. */
const Resumed = z.strictObject({ id: z.string(), status: z.literal('running') });

/** The path of one task: `/api/tasks/:id`. */
export const task = z.object({ id: z.string().meta({ examples: ['T-1A2B3C'] }) });
const chunk = task.extend({ cid: z.string().meta({ examples: ['C-001'] }) });
/** `via: dashboard`: the page says so, for the record of who decided (`gate_decided.from`). */
const via = z.enum(['dashboard']).optional();
const reason = z.object({ reason: z.string().optional(), via });

export const taskApi = {
  list: route({
    method: 'get',
    path: '/api/tasks',
    summary: 'tasks, newest first',
    query: z.object({
      status: commaList(TaskStatus).optional().describe('only tasks with one of these statuses'),
      waiting: z
        .enum(['true', 'false'])
        .optional()
        .describe('true: only tasks waiting for a person (status is then ignored)'),
      pipeline: z.string().optional(),
      limit: queryInt(1, 500).default(50),
      offset: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
    }),
    responses: { 200: json('a page of tasks', TaskPage) },
    errors: [400],
  }),
  detail: route({
    method: 'get',
    path: '/api/tasks/:id',
    summary: 'a task in full',
    params: task,
    responses: { 200: json('the task', TaskDetail) },
    errors: [404],
  }),
  context: route({
    method: 'get',
    path: '/api/tasks/:id/context',
    summary: "the task's context.md",
    params: task,
    responses: { 200: { description: 'markdown', content: 'text/plain' } },
    errors: [404],
  }),
  approve: route({
    method: 'post',
    path: '/api/tasks/:id/approve',
    summary: 'approve the output waiting at a human gate; the task carries on',
    params: task,
    body: reason,
    responses: { 202: json('accepted: the task runs on in the background', Resumed) },
    errors: [400, 404, 409],
  }),
  reject: route({
    method: 'post',
    path: '/api/tasks/:id/reject',
    summary: 'reject the output waiting at a human gate, with a reason the agent gets',
    params: task,
    body: z.object({ reason: nonBlank, via }),
    responses: { 202: json('accepted: the task runs on in the background', Resumed) },
    errors: [400, 404, 409],
  }),
  answer: route({
    method: 'post',
    path: '/api/tasks/:id/human-input',
    summary: 'answer the question the task waits on',
    params: task,
    body: withAliases(
      { answer: 'response' },
      z.object({ response: nonBlank.describe('the answer (also: answer)') }),
    ),
    responses: { 202: json('accepted: the task runs on in the background', Resumed) },
    errors: [400, 404, 409],
  }),
  cancel: route({
    method: 'post',
    path: '/api/tasks/:id/cancel',
    summary: 'cancel a task that has not ended',
    params: task,
    body: reason,
    responses: { 200: json('cancelled', z.strictObject({ id: z.string(), status: z.literal('cancelled') })) },
    errors: [400, 404, 409],
  }),
  resume: route({
    method: 'post',
    path: '/api/tasks/:id/resume',
    summary:
      'carry on a task whose process is gone (or that was stopped), here in the background; a parked task goes back to the workers, its failure count cleared',
    params: task,
    responses: { 202: json('accepted: the task runs on in the background', Resumed) },
    errors: [404, 409],
  }),
  restart: route({
    method: 'post',
    path: '/api/tasks/:id/restart',
    summary: 'set aside everything from a stage on and run the task again from there',
    params: task,
    body: withAliases({ fromStage: 'from_stage' }, z.object({ from_stage: z.int().optional() })),
    responses: { 202: json('restarted', Resumed.extend({ from_stage: z.int() })) },
    errors: [400, 404, 409],
  }),
  chunks: route({
    method: 'get',
    path: '/api/tasks/:id/chunks',
    summary: "the task's chunks",
    params: task,
    responses: { 200: json('the board', ChunkBoard) },
    errors: [404],
  }),
  addChunk: route({
    method: 'post',
    path: '/api/tasks/:id/chunks',
    summary: 'add a chunk (created_by "user"); a running task sees it on its next turn',
    params: task,
    body: z.object({ description: nonBlank }),
    responses: { 201: json('added', ChunkBoard.extend({ chunk: Chunk })) },
    errors: [400, 404, 409],
  }),
  chunkDone: route({
    method: 'patch',
    path: '/api/tasks/:id/chunks/:cid',
    summary: 'mark a chunk done',
    params: chunk,
    body: z.object({
      status: z.literal('done', {
        error: 'a chunk can only be marked done (the agents set the other statuses)',
      }),
    }),
    responses: { 200: json('updated', ChunkBoard.extend({ chunk: Chunk.nullable() })) },
    errors: [400, 404, 409],
  }),
  removeChunk: route({
    method: 'delete',
    path: '/api/tasks/:id/chunks/:cid',
    summary: 'remove a chunk',
    params: chunk,
    responses: { 200: json('removed', ChunkBoard.extend({ deleted: z.string() })) },
    errors: [404, 409],
  }),
};

export type TaskRow = z.infer<typeof TaskRow>;
export type TaskDetail = z.infer<typeof TaskDetail>;
export type ChunkBoard = z.infer<typeof ChunkBoard>;
