import type { Chunk } from '../core/chunk.js';
import { newChunk } from '../core/chunk.js';
import { messageOf, NotFoundError, StateError, UsageError } from '../core/errors.js';
import type { EventStore, TaskSummary } from '../core/event-store.js';
import {
  awaitsPerson,
  type Decider,
  type EventOf,
  isStopped,
  isTerminal,
  type TaskEvent,
} from '../core/events.js';
import { checkTaskDefinition, checkTaskInput } from '../core/input-limit.js';
import { type AgentNode, findNode, type Pipeline } from '../core/pipeline.js';
import type { Script } from '../core/script.js';
import type { SizeRecord } from '../core/spec.js';
import { agentMailbox, PERSON_MAILBOX, type TaskMail, taskThread } from '../core/task-mail.js';
import type { TaskIssueRef } from '../core/tracker.js';
import type { ProjectConfig } from '../pipeline/config.js';
import { parseVerdict } from '../pipeline/lang/human-verdict.js';
import { ProviderLimiter, type ProviderTurns } from '../scheduler/provider-limiter.js';
import { runTask } from './execute/execute.js';
import { mailboxTimedOut } from './execute/mailbox-stage.js';
import { deriveStatus, foldEvents, mailboxWaits, type TaskState, waitingFor } from './fold/task-state.js';
import { usesChunks } from './plan/chunks.js';
import { isRouted } from './plan/stage-route.js';
import type { ExecutorPorts, HumanResponder, RunObserver, TaskAdapters } from './ports.js';

/**
 * What every front end (CLI, HTTP API) does with tasks: start, continue, answer, cancel.
 * One place, so the CLI and the server behave the same.
 */
export class TaskService {
  /** One per process (the caps hold across every task it runs), or one for every worker. */
  private readonly limiter: ProviderTurns;

  constructor(
    readonly root: string,
    readonly store: EventStore,
    readonly config: ProjectConfig,
    private readonly adapters: TaskAdapters,
    limiter?: ProviderTurns,
  ) {
    this.limiter = limiter ?? new ProviderLimiter(config.limits);
  }

  /** Agents with model/effort auto need tiers; `--tier` must name one. */
  private checkRouting(pipeline: Pipeline, tier: string | null): void {
    const routed = pipeline.agents.find((a) => a.type === 'agent' && isRouted(a));
    const tiers = Object.keys(this.config.routing?.tiers ?? {});
    if (routed && tiers.length === 0) {
      throw new UsageError(`agent ${routed.id} has model or effort auto, but there are no routing tiers`, {
        hint: 'add routing: {tiers: {fast: {runtime: gemini, model: gemini-2.5-flash}, …}} to .troupe/config.yaml',
      });
    }
    if (tier !== null && !tiers.includes(tier)) {
      throw new UsageError(`no tier '${tier}'`, {
        hint: tiers.length ? `tiers: ${tiers.join(', ')}` : 'add routing: tiers to .troupe/config.yaml',
      });
    }
  }

  start(options: {
    pipeline: Pipeline;
    input: string;
    agent?: string;
    script?: Script | null;
    cwd?: string;
    parentTaskId?: string | null;
    kind?: 'run' | 'fix';
    labels?: string[];
    tier?: string | null;
    /** S, M, L or XL, and who says so (`cli`, `api`). */
    size?: SizeRecord;
    /** The tracker issue the task works on (`troupe watch`). */
    issue?: TaskIssueRef;
  }): string {
    const { pipeline } = options;
    // a fix's input carries its parent's context: only the request in it is the person's (fix)
    if (options.kind !== 'fix') checkTaskInput(options.input);
    this.checkRouting(pipeline, options.tier ?? null);
    checkTaskDefinition(pipeline, `pipeline ${pipeline.name}`);
    if (options.script) checkTaskDefinition(options.script, 'the script');
    const routed = options.agent === undefined && pipeline.entry_point === 'auto';
    const startAgent = options.agent ?? pipeline.agents[0]?.id;
    if (!startAgent || !findNode(pipeline, startAgent)) {
      throw new NotFoundError(`no agent '${options.agent}' in pipeline ${pipeline.name}`, {
        hint: `agents: ${pipeline.agents.map((a) => a.id).join(', ')}`,
      });
    }
    const event: EventOf<'task_created'> = {
      type: 'task_created',
      pipeline: pipeline.name,
      pipelineFile: pipeline.file,
      definition: pipeline,
      input: options.input,
      startAgent: routed ? null : startAgent,
      cwd: options.cwd ?? this.root,
      maxStages: this.config.pipeline.max_stages,
      timeouts: this.config.timeouts,
      gate: this.config.gate,
      script: options.script ?? null,
      prices: this.config.prices,
      routing: this.config.routing,
      ...(options.labels?.length ? { labels: options.labels } : {}),
      ...(options.tier ? { tier: options.tier } : {}),
      parentTaskId: options.parentTaskId ?? null,
      kind: options.kind ?? 'run',
      ...(options.issue ? { issue: options.issue } : {}),
    };
    const { taskId } = this.store.createTask(event);
    if (options.size) {
      this.store.append(taskId, [{ type: 'task_sized', ...options.size }], { status: 'pending' });
    }
    return taskId;
  }

  /** Runs the task in this process until it ends, waits for a person, or only `defer`red steps are left. */
  continue(
    taskId: string,
    observer?: RunObserver,
    stop?: AbortSignal,
    defer?: ExecutorPorts['defer'],
  ): Promise<TaskState> {
    this.takeMailReplies(taskId, this.mustExist(taskId).status);
    const ports: ExecutorPorts = {
      store: this.store,
      files: this.adapters.files(taskId),
      runtimeFor: (state: TaskState, node: AgentNode, purpose: 'stage' | 'gate') =>
        this.adapters.runtime(
          purpose === 'gate'
            ? (node.gate?.runtime ?? state.gateConfig.runtime ?? node.runtime)
            : node.runtime,
          state.script,
        ),
      rawLogPath: (id: string, name: string) => this.adapters.rawLogPath(id, name),
      human: scriptedHuman,
      ...(observer ? { observer } : {}),
      ...(stop ? { stop } : {}),
      mail: this.mailFor(taskId),
      workspace: this.adapters.workspace,
      limiter: this.limiter,
      ...(this.adapters.env ? { env: this.adapters.env } : {}),
      decisionLog: this.adapters.decisionLog,
      commandGate: this.adapters.commandGate,
      ...(this.adapters.troupeMcp ? { troupeMcp: this.adapters.troupeMcp } : {}),
      ...(this.adapters.endLeftovers ? { endLeftovers: this.adapters.endLeftovers } : {}),
      ...(defer ? { defer } : {}),
    };
    return runTask(taskId, ports);
  }

  state(taskId: string): TaskState {
    this.mustExist(taskId);
    return foldEvents(this.store.events(taskId));
  }

  /** A person's verdict on a task waiting at a human gate, and where it came from. */
  decideGate(taskId: string, decision: 'approved' | 'rejected', reason: string, from: Decider): void {
    const state = this.state(taskId);
    mustNotHaveEnded(state, decision === 'approved' ? 'approve' : 'reject');
    const waiting = state.stages.find((s) => s.gateWaiting);
    if (!waiting) throw new StateError(`task ${taskId} is not waiting at a gate (status: ${state.status})`);
    if (decision === 'rejected' && !reason.trim())
      throw new UsageError('a rejection needs a reason (-r "why")');
    this.store.append(
      taskId,
      [{ type: 'gate_decided', stage: waiting.n, agent: waiting.agent, decision, reason, by: 'human', from }],
      { status: 'running' },
    );
    this.asksSettled(taskId, waiting.agent);
  }

  /** A person's answer to a question an agent (or `human_input: before`) asked. */
  answer(taskId: string, answer: string): void {
    const state = this.state(taskId);
    mustNotHaveEnded(state, 'answer');
    const asking = [...state.activations.values()].find((a) => a.pendingQuestion !== null);
    if (!asking)
      throw new StateError(`task ${taskId} is not waiting for an answer (status: ${state.status})`);
    this.store.append(taskId, [{ type: 'human_input_given', activation: asking.id, answer, by: 'human' }], {
      status: 'running',
    });
    this.asksSettled(taskId, asking.agent);
  }

  /**
   * Sets aside everything from stage `fromStage` on (default: the failed stage, else the last)
   * so that the next `continue` runs the task again from there, with the context it had then.
   */
  restart(taskId: string, fromStage?: number): number {
    const state = this.state(taskId);
    const holder = this.store.leaseHolder(taskId);
    if (holder) throw new StateError(`task ${taskId} is running in process ${holder.pid}; cancel it first`);
    const last = state.stages.length;
    if (last === 0) throw new StateError(`task ${taskId} has no stages to restart from`);
    const n = fromStage ?? state.failure?.stage ?? last;
    if (!Number.isInteger(n) || n < 1 || n > last) {
      throw new UsageError(`--from-stage ${n} is outside task ${taskId}'s stages (1-${last})`);
    }
    const first = this.firstEventOfStage(taskId, n);
    this.store.restart(taskId, first, { type: 'task_restarted', fromStage: n }, { status: 'running' });
    return n;
  }

  /** Starts a follow-up task carrying a finished task's context, linked to it. */
  fix(parentId: string, request: string, options: { agent?: string; script?: Script | null } = {}): string {
    checkTaskInput(request, 'the fix request');
    const parent = this.state(parentId);
    // the request first: it is the new task's title in lists and on the dashboard
    const input = [
      request,
      '',
      `--- Follow-up of ${parentId}: ${parent.input} ---`,
      '',
      '--- Previous context ---',
      parent.contextMd.trim(),
    ].join('\n');
    return this.start({
      pipeline: parent.definition,
      input,
      ...(options.agent ? { agent: options.agent } : {}),
      script: options.script === undefined ? parent.script : options.script,
      cwd: parent.cwd,
      parentTaskId: parentId,
      kind: 'fix',
    });
  }

  /** A person's change to a task's chunks; a running task sees it on its next turn. */
  editChunks(taskId: string, edit: { add: string }): Chunk;
  editChunks(taskId: string, edit: { add: string } | { done: string } | { remove: string }): Chunk | null;
  editChunks(taskId: string, edit: { add: string } | { done: string } | { remove: string }): Chunk | null {
    const state = this.state(taskId);
    if (!usesChunks(state.definition)) {
      throw new StateError(`task ${taskId}'s pipeline has no chunks`, {
        hint: 'add a `chunks:` block to a session or agent',
      });
    }
    let event: TaskEvent;
    let chunk: Chunk | null = null;
    if ('add' in edit) {
      chunk = newChunk(state.chunks, edit.add, 'user', new Date().toISOString());
      event = { type: 'chunk_added', chunk };
    } else {
      const id = 'done' in edit ? edit.done : edit.remove;
      if (!state.chunks.some((c) => c.id === id)) {
        throw new NotFoundError(`task ${taskId} has no chunk ${id}`, {
          hint: `chunks: ${state.chunks.map((c) => c.id).join(', ') || 'none'}`,
        });
      }
      event =
        'done' in edit
          ? { type: 'chunk_updated', id, status: 'done', by: 'user' }
          : { type: 'chunk_removed', id, by: 'user' };
    }
    this.store.append(taskId, [event], { status: state.status });
    return chunk;
  }

  private firstEventOfStage(taskId: string, n: number): number {
    for (const event of this.store.events(taskId)) {
      if ((event.type === 'stage_started' || event.type === 'session_ended') && event.stage === n)
        return event.seq;
    }
    throw new NotFoundError(`task ${taskId} has no stage ${n}`);
  }

  cancel(taskId: string, reason: string): void {
    const state = this.state(taskId);
    if (isTerminal(state.status)) {
      throw new StateError(`task ${taskId} has already ended (${state.status})`);
    }
    this.store.append(taskId, [{ type: 'task_cancelled', reason }], { status: 'cancelled' });
    const waiting = waitingFor(state);
    if (waiting) this.asksSettled(taskId, waiting.agent);
  }

  /**
   * The work queue gave up on the task (its wake-ups failed `failures` times, the last with
   * `reason`): its log says so, and nothing takes it up by itself until `unpark`.
   */
  park(taskId: string, reason: string, failures: number): void {
    if (isStopped(this.state(taskId).status)) return;
    this.store.append(taskId, [{ type: 'task_parked', reason, failures }], { status: 'parked' });
  }

  /** A person resumes a parked task (`troupe resume`): recorded, so it is taken up again; whether it was parked. */
  unpark(taskId: string): boolean {
    const state = this.state(taskId);
    if (state.status !== 'parked') return false;
    state.parked = null;
    this.store.append(taskId, [{ type: 'task_resumed', pid: process.pid }], { status: deriveStatus(state) });
    return true;
  }

  /**
   * A person's reply on the task's bus thread (`approve`, `reject: reason`, or an answer) counts
   * as `troupe approve` / `reject` / `human-input` would. Returns whether one was taken.
   */
  takeMailReplies(taskId: string, status = this.store.task(taskId)?.status): boolean {
    if (status === 'waiting') return this.takeMailboxReplies(taskId);
    if (!status || !awaitsPerson(status)) return false;
    const state = this.state(taskId);
    const waiting = waitingFor(state);
    if (!waiting) return false;
    // a gate's mail verdicts are off unless the project turned them on (docs/security.md)
    if (waiting.kind === 'gate' && !this.config.gate.mail_verdicts) return false;
    let replies: string[];
    try {
      replies = this.mailFor(taskId).takeReplies(taskId, waiting.agent);
    } catch (error) {
      this.noteUnreadableReplies(state, waiting.agent, error); // the CLI commands still work
      return false;
    }
    const reply = replies[0]?.trim();
    if (reply === undefined) return false;
    if (waiting.kind === 'gate') {
      const verdict = parseVerdict(reply);
      if (!verdict) return false; // neither a yes nor a no: the gate keeps waiting
      this.decideGate(
        taskId,
        verdict.decision,
        verdict.reason || (verdict.decision === 'rejected' ? 'rejected by reply' : ''),
        { channel: 'mail', who: PERSON_MAILBOX },
      );
    } else {
      this.answer(taskId, reply);
    }
    return true;
  }

  /**
   * Mailbox agents' replies on the task's thread (from their handle) become their stages'
   * output; a stage whose `timeout:` passed without one fails as a timeout. Returns whether
   * anything was recorded (the task can go on).
   */
  private takeMailboxReplies(taskId: string): boolean {
    const state = this.state(taskId);
    const now = new Date();
    const events: TaskEvent[] = [];
    const taken: Array<{ agent: string; ids: string[] }> = [];
    for (const wait of mailboxWaits(state)) {
      let replies: Array<{ id: string; body: string }> = [];
      try {
        replies = this.mailFor(taskId).peekReplies(taskId, wait.agent, wait.handle, wait.askedAt);
      } catch (error) {
        this.noteUnreadableReplies(state, wait.agent, error); // the deadline still holds
      }
      if (replies.length > 0) {
        const body = replies.map((r) => r.body.trimEnd()).join('\n\n');
        events.push({
          type: 'mailbox_replied',
          stage: wait.stage,
          activation: wait.activation,
          from: wait.handle,
          body,
        });
        taken.push({ agent: wait.agent, ids: replies.map((r) => r.id) });
      } else if (wait.deadline !== null && Date.parse(wait.deadline) <= now.getTime()) {
        events.push(mailboxTimedOut(state, wait, now));
      }
    }
    if (events.length === 0) return false;
    this.store.append(taskId, events, { status: 'running' });
    // recorded first, read after: a crash between the two leaves the reply unread, not lost
    for (const { agent, ids } of taken) this.mailFor(taskId).markRead(agent, ids);
    return true;
  }

  /**
   * Replies that cannot be read off the bus (a broken roster, a refused mailbox) are recorded as
   * `mail_failed`, once per reason (this is polled), so the task does not wait in silence.
   */
  private noteUnreadableReplies(state: TaskState, agent: string, error: unknown): void {
    const failure = {
      type: 'mail_failed' as const,
      to: agentMailbox(agent),
      kind: 'reply',
      subject: `replies on ${taskThread(state.id)}`,
      reason: `cannot be read: ${messageOf(error)}`,
    };
    const last = state.mailFailures.at(-1);
    if (last && last.to === failure.to && last.kind === failure.kind && last.reason === failure.reason)
      return;
    this.store.append(state.id, [failure], { status: state.status });
  }

  /**
   * The person's asks from `agent` on the task's thread no longer wait for them (decided,
   * answered, cancelled): read, so the inbox keeps only what still needs them. The record is
   * what counts; a bus that cannot be written now leaves the mail unread, nothing else.
   */
  private asksSettled(taskId: string, agent: string): void {
    try {
      this.mailFor(taskId).markAsksRead(taskId, agent);
    } catch {
      // the decision is stored; only the inbox's unread mark is stale
    }
  }

  /** The task's mail; the bus is opened (and the agents' mailboxes made) only when first used. */
  private mailFor(taskId: string): TaskMail {
    return this.adapters.mail(taskId, () => this.state(taskId).definition.agents.map((a) => a.id));
  }

  private mustExist(taskId: string): TaskSummary {
    const summary = this.store.task(taskId);
    if (!summary) throw new NotFoundError(`no task ${taskId}`, { hint: 'see `troupe list`' });
    return summary;
  }
}

/** A person's word on a task that has ended says why there is nothing to do (StateError). */
export function mustNotHaveEnded(
  state: Readonly<TaskState>,
  what: 'approve' | 'reject' | 'answer' | 'resume',
): void {
  if (state.status === 'cancelled' && state.cancelledAt) {
    throw new StateError(`${state.id} was cancelled at ${state.cancelledAt}; nothing to ${what}`);
  }
  if (isTerminal(state.status))
    throw new StateError(`${state.id} has already ${state.status}; nothing to ${what}`);
}

/** Answers from the task's own script (`human:`), in order; none without a script. */
function scriptedHuman(state: TaskState): HumanResponder {
  return {
    answer(agent, index) {
      const answers = state.script?.human[agent];
      return answers?.[index];
    },
  };
}
