import { LeaseLostError, StateError, StoreUnavailableError, TaskBusyError } from '../../core/errors.js';
import { currentHolder } from '../../core/event-store.js';
import { isTerminal, type TaskEvent } from '../../core/events.js';
import { type AgentNode, findNode } from '../../core/pipeline.js';
import { RuntimeError } from '../../core/runtime.js';
import { outcomeLine } from '../../scheduler/decision-lines.js';
import { ROUTE_EVENT_TYPES, type RouteOutcome, routeOutcomes } from '../../scheduler/route-history.js';
import { foldEvents, type TaskState } from '../fold/task-state.js';
import { nextSteps, type Step, type StepOf, stepKey } from '../plan/plan.js';
import type { ExecutorPorts } from '../ports.js';
import { EventBatch } from './event-batch.js';
import { FileSync } from './file-sync.js';
import { evaluateGate, verifyFinal } from './gate-steps.js';
import { askHuman, awaitGate } from './human-steps.js';
import { askEntryRouter } from './router-calls.js';
import type { RunContext } from './run-context.js';
import { StopRequested } from './run-support.js';
import { RunWorkspace } from './run-workspace.js';
import { finishMailboxStage, runStage } from './stage-run.js';

/**
 * The executor: performs the planner's steps through ports (runtimes, the store, people) and
 * records what happened. It runs a task until it ends or waits for a person; fan-out
 * branches run at the same time. Every step is safe to run twice: a crash between doing and
 * recording re-does the step on resume, and nothing recorded is done again.
 */

export async function runTask(taskId: string, ports: ExecutorPorts): Promise<TaskState> {
  const holder = currentHolder();
  if (!ports.store.tryLease(taskId, holder)) {
    const other = ports.store.leaseHolder(taskId);
    throw new TaskBusyError(
      `task ${taskId} is being run by process ${other?.pid ?? '?'} on ${other?.host ?? '?'}`,
    );
  }
  try {
    return await new TaskRun(taskId, ports).run();
  } finally {
    ports.store.releaseLease(taskId, holder);
  }
}

/** Stops whatever a run leaves in flight; made once, since an abort reason made per run costs a stack trace. */
const RUN_ENDED = new RuntimeError('cancelled', 'run ended');

/** The loop: plan, perform the first step not already in flight, repeat. */
class TaskRun implements RunContext {
  readonly events: EventBatch;
  readonly files: FileSync;
  readonly workspace: RunWorkspace;
  readonly rateLimits = new Map<number, number>();
  private readonly abort = new AbortController();
  private readonly inflight = new Map<string, Promise<void>>();
  private wake: () => void = () => {};
  private stopped: Error | null = null;
  private history: RouteOutcome[] | null = null;

  constructor(
    readonly taskId: string,
    readonly ports: ExecutorPorts,
  ) {
    this.events = new EventBatch(taskId, ports, foldEvents(ports.store.events(taskId)), {
      filesChanged: () => this.files.schedule(),
      flushed: () => this.wake(),
    });
    this.files = new FileSync(ports.files, () => this.events.state);
    this.workspace = new RunWorkspace(taskId, ports.workspace, this.events, () => this.fence());
  }

  get state(): TaskState {
    return this.events.state;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  async run(): Promise<TaskState> {
    if (isTerminal(this.state.status)) return this.state;
    this.ports.files.sync(this.state);
    await this.recoverInterrupted();
    const poll = setInterval(() => this.pollForeignEvents(), this.ports.pollMs ?? 200);
    const stop = () => {
      this.stopped ??= new StopRequested();
      this.abort.abort(new RuntimeError('cancelled', 'stopped'));
      this.wake();
    };
    if (this.ports.stop?.aborted) stop();
    this.ports.stop?.addEventListener('abort', stop, { once: true });
    try {
      await this.workspace.prepare();
      await this.loop();
      this.events.flush();
    } catch (error) {
      this.stopped ??= error instanceof Error ? error : new Error(String(error));
    } finally {
      clearInterval(poll);
      this.ports.stop?.removeEventListener('abort', stop);
      this.abort.abort(RUN_ENDED);
      await Promise.allSettled(this.inflight.values());
      await this.workspace.close();
      void this.files.sync();
    }
    if (this.stopped && !(this.stopped instanceof StateError) && !(this.stopped instanceof StopRequested))
      throw this.stopped;
    // the store may know better (another process cancelled the task)
    const state = this.stopped ? foldEvents(this.ports.store.events(this.taskId)) : this.state;
    if (isTerminal(state.status)) this.logOutcomes(state);
    return state;
  }

  /**
   * Before git work the log cannot fence: a run whose lease another process holds now (it was
   * stalled past the lease, and the task taken over) stops here, before touching the worktree.
   */
  private fence(): void {
    if (this.ports.store.holdsLease?.(this.taskId) === false)
      throw new LeaseLostError(
        this.taskId,
        `the lease of task ${this.taskId} was lost (another worker took it over, or it expired): no git work from here`,
      );
  }

  routeHistory(): RouteOutcome[] {
    this.history ??= routeOutcomes(this.ports.store.eventsOfTypes(ROUTE_EVENT_TYPES, 'decision'));
    return this.history;
  }

  agent(id: string): AgentNode {
    const node = findNode(this.state.definition, id);
    if (node?.type !== 'agent') throw new Error(`no agent ${id}`);
    return node;
  }

  /** The task ended: its routed stages' outcomes go to the decision log. */
  private logOutcomes(state: TaskState): void {
    const log = this.ports.decisionLog;
    if (!log || Object.keys(state.routes).length === 0) return;
    try {
      for (const outcome of routeOutcomes(this.ports.store.events(this.taskId))) log(outcomeLine(outcome));
    } catch {
      // a courtesy, as mail is
    }
  }

  /**
   * Taking over a task that ran before: what its last owner left running on this machine ends
   * first (that owner may have died without its supervisors, or be a stalled process whose
   * lease ran out), so no stage ever runs twice at once; the stages it cut off run again.
   */
  private async recoverInterrupted(): Promise<void> {
    if (this.state.lastSeq === 0) return;
    // a mailbox agent's stage waits on the bus, not in a process: nothing was cut off
    const interrupted = [...this.state.activations.values()].filter(
      (a) => a.status === 'running' && !a.mailbox,
    );
    // a task none of whose stages has started yet has nothing left running
    const ended = this.state.stages.length > 0 ? ((await this.ports.endLeftovers?.(this.taskId)) ?? []) : [];
    const events: TaskEvent[] = [
      { type: 'task_resumed', pid: process.pid, ...(ended.length ? { ended } : {}) },
    ];
    for (const a of interrupted)
      events.push({ type: 'stage_interrupted', stage: a.stage!, activation: a.id });
    if (interrupted.length > 0 || this.state.stages.length > 0) this.events.record(events);
  }

  private async loop(): Promise<void> {
    while (!this.stopped && !isTerminal(this.state.status)) {
      this.workspace.keepCheckoutsAhead();
      const step = nextSteps(this.state).find(
        (s) => !this.inflight.has(stepKey(s)) && !this.ports.defer?.(s, this.state),
      );
      if (step) {
        this.perform(step);
        continue;
      }
      this.events.flush();
      if (this.inflight.size === 0) return; // waiting for a person, or nothing left to do
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        for (const p of this.inflight.values()) p.then(resolve, resolve);
      });
    }
  }

  /** Pure steps are recorded at once; the rest run concurrently, tracked until they settle. */
  private perform(step: Step): void {
    switch (step.kind) {
      case 'complete':
        if (this.workspace.needsMerge()) this.track(step, this.workspace.mergeAndComplete());
        else this.events.record([{ type: 'task_completed' }]);
        return;
      case 'fail':
        this.events.record([
          { type: 'task_failed', reason: step.reason, stage: step.stage, errorKind: step.errorKind },
        ]);
        return;
      case 'handoff':
        this.events.record([
          { type: 'handoff', stage: step.stage, activation: step.activation, targets: step.targets },
        ]);
        return;
      case 'join':
        this.events.record([{ type: 'join', agent: step.agent, activations: step.activations }]);
        return;
      case 'merge_branches':
        this.track(step, this.mergeBranches(step));
        return;
      case 'conflict_handled': {
        const { kind: _, ...event } = step;
        this.events.record([{ type: 'conflict_handled', ...event }]);
        return;
      }
      case 'start_session': {
        const { kind: _, ...event } = step;
        this.events.record([{ type: 'session_started', ...event }]);
        return;
      }
      case 'end_round': {
        const { kind: _, ...event } = step;
        this.events.record([{ type: 'session_round_ended', ...event }]);
        return;
      }
      case 'end_session': {
        const { kind: _, ...event } = step;
        this.events.record([{ type: 'session_ended', ...event }]);
        return;
      }
      case 'ask_human':
        askHuman(this, step);
        return;
      case 'await_gate':
        awaitGate(this, step);
        return;
      case 'start_stage':
        this.track(step, runStage(this, step));
        return;
      case 'finish_mailbox_stage':
        this.track(step, finishMailboxStage(this, step));
        return;
      case 'evaluate_gate':
        this.track(step, evaluateGate(this, step));
        return;
      case 'route_entry':
        this.track(step, this.routeEntry());
        return;
      case 'budget_warning': {
        const { kind: _, ...event } = step;
        this.events.record([{ type: 'budget_warning', ...event }]);
        return;
      }
      case 'verify_final':
        this.track(step, verifyFinal(this, step));
        return;
      case 'expand_plan': {
        const { kind: _, ...event } = step;
        this.events.record([{ type: 'plan_expanded', ...event }]);
        return;
      }
      case 'start_piece':
        this.events.record([{ type: 'piece_started', piece: step.piece, input: step.input }]);
        return;
      case 'prepare_piece':
        this.track(step, this.workspace.preparePiece(step.piece));
        return;
      case 'fail_piece':
        this.events.record([
          { type: 'piece_failed', piece: step.piece, reason: step.reason, stage: step.stage },
        ]);
        return;
      case 'replan': {
        const { kind: _, ...event } = step;
        this.events.record([{ type: 'plan_replanned', ...event }]);
        return;
      }
      default:
        step satisfies never;
    }
  }

  private track(step: Step, work: Promise<void>): void {
    const key = stepKey(step);
    const done = work.catch((error: unknown) => {
      this.stopped ??= error instanceof Error ? error : new Error(String(error));
    });
    this.inflight.set(
      key,
      done.finally(() => this.inflight.delete(key)),
    );
  }

  /**
   * A conflict with no `on_conflict` agent becomes a question to a person. A piece's files
   * outside its paths are recorded before it merges.
   */
  private async mergeBranches(step: StepOf<'merge_branches'>): Promise<void> {
    const pieces = step.pieces ?? [];
    // read beside the merge (each in its piece's worktree), recorded before it
    const flagged = Promise.all(pieces.map((piece) => this.workspace.outsidePaths(piece))).then((outside) =>
      pieces.flatMap((piece, i) =>
        outside[i]!.length > 0 ? [{ type: 'piece_outside_paths' as const, piece, files: outside[i]! }] : [],
      ),
    );
    const ask = await this.workspace.mergeBranches(step, flagged);
    if (ask) askHuman(this, ask);
  }

  /** `entry_point: auto`: the router's pick of the first agent. */
  private async routeEntry(): Promise<void> {
    this.events.flush();
    this.events.record([await askEntryRouter(this)]);
  }

  /** A cancel from another process aborts whatever is running. */
  private pollForeignEvents(): void {
    try {
      this.events.applyForeignEvents();
    } catch (error) {
      // a timer callback must not throw (it would end the process): a store that is briefly
      // unreachable (a database restart) is asked again at the next tick
      if (error instanceof StoreUnavailableError) return;
      throw error;
    }
    if (this.state.status === 'cancelled') {
      this.stopped ??= new StateError(`task ${this.taskId} was cancelled`);
      this.abort.abort(new RuntimeError('cancelled', 'task cancelled'));
    }
    this.wake();
  }
}
