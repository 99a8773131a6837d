import { StateError, TaskBusyError } from '../core/errors.js';
import { currentHolder } from '../core/event-store.js';
import { isTerminal, type StoredEvent, type TaskEvent } from '../core/events.js';
import { type AgentNode, findNode } from '../core/pipeline.js';
import { RuntimeError, type RuntimeRequest } from '../core/runtime.js';
import { defaultIsolation, editingAgents } from '../pipeline/isolation.js';
import { parseSendDirectives } from '../pipeline/lang/directives.js';
import { parseVerdict } from '../pipeline/lang/human-verdict.js';
import { decisionLine, outcomeLine } from '../scheduler/decision-lines.js';
import { withCost } from '../scheduler/prices.js';
import { noRelease } from '../scheduler/provider-limiter.js';
import { ROUTE_EVENT_TYPES, type RouteOutcome, routeOutcomes } from '../scheduler/route-history.js';
import { BranchWorkspaces, type Workplace } from './branch-workspaces.js';
import type { CallContext } from './call-context.js';
import { chunkEventsFromOutput, usesChunks } from './chunks.js';
import { type Judged, judgeOutput } from './gate-judge.js';
import { outputCheckEvents } from './output-check.js';
import { nextSteps, type Step, stepKey } from './plan.js';
import type { ExecutorPorts } from './ports.js';
import { readsVariable, stagePrompt, turnPrompt } from './prompt.js';
import { askEntryRouter, askTierRouter } from './router-calls.js';
import {
  asRuntimeError,
  invokeRuntime,
  limitResetTime,
  OutputBuffer,
  resumableSession,
  StopRequested,
  sleepUntil,
} from './run-support.js';
import {
  concreteEffort,
  concreteModel,
  isRouted,
  RoutingUnavailableError,
  routeStage,
} from './stage-route.js';
import { applyEvent, foldEvents, type TaskState, workspaceSettings } from './task-state.js';

/**
 * The executor: performs the planner's steps through ports (runtimes, the store, people) and
 * appends what happened. It runs a task until it ends or waits for a person; fan-out
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

class TaskRun {
  private state: TaskState;
  private readonly abort = new AbortController();
  private readonly inflight = new Map<string, Promise<void>>();
  private wake: () => void = () => {};
  private stopped: Error | null = null;
  /** The poller's place in the log, and the events this process wrote that it has not passed yet. */
  private pollCursor: number;
  private readonly ownSeqs = new Set<number>();
  private batch: TaskEvent[] = [];
  private readonly afterFlushActions: Array<() => void> = [];
  private gitQueue: Promise<void> = Promise.resolve();
  /** Limits met per stage in this process, for the backoff when a provider gives no reset time. */
  private readonly rateLimitCounts = new Map<number, number>();
  private batchAt: string | null = null;
  private filesTimer: NodeJS.Timeout | null = null;
  private history: RouteOutcome[] | null = null;
  private readonly branchWorkspaces: BranchWorkspaces | null;

  constructor(
    private readonly taskId: string,
    private readonly ports: ExecutorPorts,
  ) {
    this.state = foldEvents(ports.store.events(taskId));
    this.pollCursor = this.state.lastSeq;
    this.branchWorkspaces = ports.workspace
      ? new BranchWorkspaces(
          taskId,
          ports.workspace,
          () => this.state,
          (work) => this.serialGit(work),
        )
      : null;
  }

  async run(): Promise<TaskState> {
    if (isTerminal(this.state.status)) return this.state;
    this.ports.files.sync(this.state);
    this.recoverInterrupted();
    const poll = setInterval(() => this.pollForeignEvents(), this.ports.pollMs ?? 200);
    const stop = () => {
      this.stopped ??= new StopRequested();
      this.abort.abort(new RuntimeError('cancelled', 'stopped'));
      this.wake();
    };
    if (this.ports.stop?.aborted) stop();
    this.ports.stop?.addEventListener('abort', stop, { once: true });
    try {
      await this.prepareWorkspace();
      await this.loop();
      this.flush();
    } catch (error) {
      this.stopped ??= error instanceof Error ? error : new Error(String(error));
    } finally {
      clearInterval(poll);
      this.ports.stop?.removeEventListener('abort', stop);
      this.abort.abort(RUN_ENDED);
      await Promise.allSettled(this.inflight.values());
      void this.syncFiles();
    }
    if (this.stopped && !(this.stopped instanceof StateError) && !(this.stopped instanceof StopRequested))
      throw this.stopped;
    // the store may know better (another process cancelled the task)
    if (this.stopped) this.state = foldEvents(this.ports.store.events(this.taskId));
    if (isTerminal(this.state.status)) this.logOutcomes();
    return this.state;
  }

  /** Outcomes of earlier routing decisions (all tasks), read once per run when a stage is routed. */
  private routeHistory(): RouteOutcome[] {
    this.history ??= routeOutcomes(this.ports.store.eventsOfTypes(ROUTE_EVENT_TYPES, 'decision'));
    return this.history;
  }

  /** The task ended: its routed stages' outcomes go to the decision log. */
  private logOutcomes(): void {
    const log = this.ports.decisionLog;
    if (!log || Object.keys(this.state.routes).length === 0) return;
    try {
      for (const outcome of routeOutcomes(this.ports.store.events(this.taskId))) log(outcomeLine(outcome));
    } catch {
      // a courtesy, as in flush()
    }
  }

  private recoverInterrupted(): void {
    const interrupted = [...this.state.activations.values()].filter((a) => a.status === 'running');
    const events: TaskEvent[] = [{ type: 'task_resumed', pid: process.pid }];
    for (const a of interrupted)
      events.push({ type: 'stage_interrupted', stage: a.stage!, activation: a.id });
    if (this.state.lastSeq > 0 && (interrupted.length > 0 || this.state.stages.length > 0))
      this.commit(events);
  }

  private async loop(): Promise<void> {
    while (!this.stopped && !isTerminal(this.state.status)) {
      const step = nextSteps(this.state).find((s) => !this.inflight.has(stepKey(s)));
      if (step) {
        this.perform(step);
        continue;
      }
      this.flush();
      if (this.inflight.size === 0) return; // waiting for a person, or nothing left to do
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        for (const p of this.inflight.values()) p.then(resolve, resolve);
      });
    }
  }

  private perform(step: Step): void {
    switch (step.kind) {
      case 'complete':
        if (this.needsMerge()) this.track(step, this.mergeAndComplete());
        else this.commit([{ type: 'task_completed' }]);
        return;
      case 'fail':
        this.commit([
          { type: 'task_failed', reason: step.reason, stage: step.stage, errorKind: step.errorKind },
        ]);
        return;
      case 'handoff':
        this.commit([
          { type: 'handoff', stage: step.stage, activation: step.activation, targets: step.targets },
        ]);
        return;
      case 'join':
        this.commit([{ type: 'join', agent: step.agent, activations: step.activations }]);
        return;
      case 'merge_branches':
        this.track(step, this.mergeBranches(step));
        return;
      case 'conflict_handled': {
        const { kind: _, ...event } = step;
        this.commit([{ type: 'conflict_handled', ...event }]);
        return;
      }
      case 'start_session': {
        const { kind: _, ...event } = step;
        this.commit([{ type: 'session_started', ...event }]);
        return;
      }
      case 'end_round': {
        const { kind: _, ...event } = step;
        this.commit([{ type: 'session_round_ended', ...event }]);
        return;
      }
      case 'end_session': {
        const { kind: _, ...event } = step;
        this.commit([{ type: 'session_ended', ...event }]);
        return;
      }
      case 'ask_human':
        this.askHuman(step);
        return;
      case 'await_gate':
        this.awaitGate(step);
        return;
      case 'start_stage':
        this.track(step, this.runStage(step));
        return;
      case 'evaluate_gate':
        this.track(step, this.evaluateGate(step));
        return;
      case 'route_entry':
        this.track(step, this.routeEntry());
        return;
      case 'budget_warning': {
        const { kind: _, ...event } = step;
        this.commit([{ type: 'budget_warning', ...event }]);
        return;
      }
      case 'verify_final':
        this.track(step, this.verifyFinal(step));
        return;
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

  /** A join's branches go into its worktree first; a conflict goes to `on_conflict` or a person. */
  private async mergeBranches(step: Extract<Step, { kind: 'merge_branches' }>): Promise<void> {
    this.flush();
    let outcome: Awaited<ReturnType<BranchWorkspaces['merge']>>;
    try {
      outcome = await this.branchWorkspaces!.merge(step);
    } catch (error) {
      return this.commit([
        { type: 'task_failed', reason: (error as Error).message, stage: null, errorKind: 'workspace' },
      ]);
    }
    this.commit(outcome.events);
    if (outcome.ask)
      this.askHuman({ kind: 'ask_human', stage: null, mode: 'merge_conflict', ...outcome.ask });
  }

  private askHuman(step: Extract<Step, { kind: 'ask_human' }>): void {
    const requested: TaskEvent = {
      type: 'human_input_requested',
      activation: step.activation,
      agent: step.agent,
      stage: step.stage,
      mode: step.mode,
      questions: step.questions,
    };
    const answer = this.ports.human(this.state).answer(step.agent, this.state.humanAnswers[step.agent] ?? 0);
    if (answer !== undefined) {
      this.commit([
        requested,
        { type: 'human_input_given', activation: step.activation, answer, by: 'script' },
      ]);
      return;
    }
    this.commit([requested]);
    this.afterFlush(() =>
      this.ports.mail?.askPerson({
        taskId: this.taskId,
        agent: step.agent,
        kind: 'question',
        subject: `${step.agent} asks (${this.taskId})`,
        body: `${step.questions.map((q) => `- ${q}`).join('\n')}\n\nReply on this thread with your answer.`,
      }),
    );
  }

  private awaitGate(step: Extract<Step, { kind: 'await_gate' }>): void {
    const answer = this.ports.human(this.state).answer(step.agent, this.state.humanAnswers[step.agent] ?? 0);
    if (answer === undefined) {
      this.commit([{ type: 'gate_waiting', stage: step.stage, agent: step.agent }]);
      const output = this.state.stages[step.stage - 1]?.output ?? '';
      this.afterFlush(() =>
        this.ports.mail?.askPerson({
          taskId: this.taskId,
          agent: step.agent,
          kind: 'review_request',
          subject: `approve ${step.agent}'s output? (${this.taskId}, stage ${step.stage})`,
          body: `${output}\n\n---\nReply on this thread: \`approve\` (optionally with a reason), or \`reject: <reason>\`.`,
        }),
      );
      return;
    }
    // a scripted answer that is neither a yes nor a no approves, with the words as the reason
    const verdict = parseVerdict(answer) ?? { decision: 'approved' as const, reason: answer };
    this.commit([{ type: 'gate_decided', stage: step.stage, agent: step.agent, ...verdict, by: 'human' }]);
  }

  private async runStage(step: Extract<Step, { kind: 'start_stage' }>): Promise<void> {
    if (step.notBefore) await sleepUntil(step.notBefore, this.abort.signal);
    const node = this.agent(step.agent);
    const activation = this.state.activations.get(step.activation)!;
    // the provider whose limit this stage waited out (the fold clears it once the stage starts)
    const limitedBy = activation.waitingFor?.provider ?? null;
    let prompt: string;
    try {
      let inbox = '';
      if (this.ports.mail && readsVariable(node, 'inbox')) {
        this.flush(); // mail that earlier stages sent goes out first
        inbox = this.ports.mail.drainInbox(node.id);
      }
      prompt = step.turn
        ? turnPrompt(this.state, node, step.input, inbox)
        : stagePrompt(this.state, node, activation, step.input, step.attempt, inbox);
    } catch (error) {
      return this.commit([
        { type: 'task_failed', reason: (error as Error).message, stage: null, errorKind: 'template_error' },
      ]);
    }
    // awaited only when there is git work: an await here would let the loop commit the previous
    // stage's events on their own, a second transaction per stage
    const pending = this.workplace(step.activation);
    const place = pending instanceof Promise ? await pending : pending;
    if (!place) return;
    this.commit([
      {
        type: 'stage_started',
        stage: step.stage,
        activation: step.activation,
        agent: node.id,
        input: step.input,
        attempt: step.attempt,
        ...(step.turn ? { turn: step.turn } : {}),
      },
    ]);
    const started = Date.now();
    const streamed = new OutputBuffer((text) => {
      this.commit([{ type: 'stage_output', stage: step.stage, text }]);
      this.flush();
    }, this.ports.flushMs);
    const request: RuntimeRequest = {
      agentId: node.id,
      purpose: 'stage',
      prompt,
      systemPrompt: node.system_prompt,
      model: null,
      effort: null,
      cwd: place.cwd,
      mcp: node.mcp,
      extraFlags: node.cli_flags,
      timeoutMs: 0,
      signal: this.abort.signal,
      resumeSessionId: node.resume ? resumableSession(this.state.agentMeta[node.id] ?? []) : null,
      previousMeta: this.state.agentMeta[node.id] ?? [],
      permissions: node.permissions ?? null,
      command: node.command ?? null,
      openai: node.openai ? { baseUrl: node.openai.base_url, apiKeyEnv: node.openai.api_key_env } : null,
      rawLogPath:
        this.ports.rawLogPath?.(this.taskId, `${step.stage}${step.turn ? `-r${step.turn.round}` : ''}`) ??
        null,
    };
    const chosen = await this.chooseRunner(step, node);
    if (!chosen) return;
    const { runner, provider, choices, closed } = chosen;
    request.model = concreteModel(runner.model);
    request.effort = concreteEffort(runner.effort);
    request.timeoutMs = (node.timeout ?? this.state.timeouts[runner.runtime] ?? 600) * 1000;
    // back on the provider that limited it: the stage continues the CLI's own conversation
    // (claude --resume, codex exec resume), so the agent keeps what it had done
    if (limitedBy === runner.runtime && !request.resumeSessionId) {
      request.resumeSessionId = resumableSession(this.state.agentMeta[node.id] ?? []);
    }
    // what is recorded so far is committed before the runtime runs (a store error is not the runtime's)
    this.flush();
    try {
      const runtime = this.ports.runtimeFor(this.state, runner, 'stage');
      if (runtime.name !== 'scripted') await this.syncFiles();
      const turn = this.ports.limiter?.acquire(provider, this.abort.signal) ?? noRelease;
      const release = typeof turn === 'function' ? turn : await turn;
      // another task may have met the limit while this one waited its turn: no call into a closed window
      const closedNow = this.ports.store.closedProviders(new Date()).find((w) => w.provider === provider);
      if (closedNow) {
        release();
        streamed.close();
        const why = `${provider} is closed until ${closedNow.resetAt}`;
        this.commit([this.rateLimited(step, provider, closedNow.resetAt, why, choices, closed)]);
        return;
      }
      const result = await invokeRuntime(
        this.abort.signal,
        runtime,
        request,
        (text) => {
          streamed.add(text);
          this.ports.observer?.onText?.(step.stage, node.id, text);
        },
        // committed with the stage's outcome, in its transaction
        (message) => this.commit([{ type: 'stage_warning', stage: step.stage, agent: node.id, message }]),
      ).finally(release);
      streamed.close();
      const sha = await this.commitWork(step.stage, node.id, place);
      const chunkEvents = usesChunks(this.state.definition)
        ? chunkEventsFromOutput(this.state.chunks, node.id, result.text, new Date().toISOString())
        : [];
      this.commit([
        {
          type: 'stage_completed',
          stage: step.stage,
          activation: step.activation,
          agent: node.id,
          output: result.text,
          usage: withCost(result.usage, request.model, this.state.prices),
          durationMs: Date.now() - started,
          ...(result.meta ? { meta: result.meta } : {}),
        },
        ...(sha
          ? [
              {
                type: 'workspace_committed' as const,
                stage: step.stage,
                sha,
                ...(place.branch ? { branch: place.branch } : {}),
              },
            ]
          : []),
        ...chunkEvents,
        ...outputCheckEvents(this.state, node, step.stage, result.text, step.turn !== undefined),
      ]);
      const mail = this.ports.mail;
      const sends = mail ? parseSendDirectives(result.text) : [];
      if (mail && sends.length > 0) {
        // sent once the completion is committed, so a stage run again never sends twice
        this.afterFlush(() => {
          for (const m of sends) mail.send({ taskId: this.taskId, from: node.id, ...m });
        });
      }
    } catch (error) {
      streamed.close();
      if (this.abort.signal.aborted) throw error;
      const failure = asRuntimeError(error);
      if (failure.kind === 'rate_limited' || failure.kind === 'usage_limit') {
        const resetAt = this.resetTime(failure.resetAt, step.activation);
        this.rateLimitCounts.set(step.stage, this.rateLimitsAt(step.stage) + 1);
        this.ports.store.closeProvider(provider, resetAt);
        this.commit([
          this.rateLimited(step, provider, resetAt, failure.message, choices, closed, failure.options.meta),
        ]);
        return;
      }
      const backoffS = node.retry?.backoff ?? 0;
      const retryAt = failure.resetAt ?? (backoffS > 0 ? new Date(Date.now() + backoffS * 1000) : undefined);
      this.commit([
        {
          type: 'stage_attempt_failed',
          stage: step.stage,
          activation: step.activation,
          agent: node.id,
          attempt: step.attempt,
          error: { kind: failure.kind, message: failure.message },
          partialOutput: failure.options.partialOutput ?? streamed.all,
          ...(retryAt ? { retryAt: retryAt.toISOString() } : {}),
          meta: { ...failure.options.meta, error_kind: failure.kind },
        },
      ]);
    }
  }

  /**
   * Who runs the stage: the agent, on its routed tier (model/effort auto), or on the first
   * fallback whose provider is open. Null when it cannot run now (every provider it may use is
   * closed: the wait is recorded; or routing is impossible: the task failed).
   */
  private async chooseRunner(step: Extract<Step, { kind: 'start_stage' }>, node: AgentNode) {
    const closed = new Map(this.ports.store.closedProviders(new Date()).map((w) => [w.provider, w.resetAt]));
    let worker = node;
    if (isRouted(node)) {
      const advice = this.state.routes[step.stage] ? null : await askTierRouter(this.callContext(), node);
      try {
        const routed = routeStage(
          this.state,
          node,
          step.stage,
          new Set(closed.keys()),
          () => this.routeHistory(),
          advice,
        );
        worker = routed.node;
        if (routed.decision) this.commit([routed.decision]);
      } catch (error) {
        if (!(error instanceof RoutingUnavailableError)) throw error;
        this.commit([{ type: 'task_failed', reason: error.message, stage: null, errorKind: error.code }]);
        return null;
      }
    }
    // the agent's runtime, or the first fallback whose provider is open
    const choices = [{ runtime: worker.runtime, model: worker.model }, ...(node.fallback ?? [])];
    const choice = choices.find((c) => !closed.has(c.runtime));
    if (!choice) {
      // no call while every provider it may use is closed: wait with everything else that needs them
      const reopens = choices.map((c) => closed.get(c.runtime)!).sort()[0]!;
      this.commit([
        this.rateLimited(
          step,
          worker.runtime,
          reopens,
          `${choices.map((c) => c.runtime).join(', ')} ${choices.length > 1 ? 'are' : 'is'} closed until ${reopens}`,
          choices,
          closed,
        ),
      ]);
      return null;
    }
    const provider = choice.runtime;
    const runner =
      choice === choices[0] ? worker : { ...worker, runtime: choice.runtime, model: choice.model };
    if (runner !== worker) {
      this.commit([
        {
          type: 'decision',
          stage: step.stage,
          agent: node.id,
          kind: 'fallback',
          from: { runtime: worker.runtime, model: concreteModel(worker.model) },
          to: { runtime: choice.runtime, model: choice.model },
          reason: `${worker.runtime} is closed until ${closed.get(worker.runtime)}`,
        },
      ]);
    }
    return { runner, provider, choices, closed };
  }

  /**
   * `workspace: {isolation: worktree}`, or by default when an agent edits code and the task is in
   * a git repository: the task gets its own worktree and branch before its first stage; a resumed
   * task finds and reuses the one it had.
   */
  private async prepareWorkspace(): Promise<void> {
    const port = this.ports.workspace;
    if (!port) return;
    const known = this.state.workspace;
    try {
      // decided once, before the first stage (a task that already ran in place stays there), and
      // only asked of git when an agent edits code: the rest run in place, as they always have
      const { definition } = this.state;
      if (
        !definition.workspace &&
        !this.state.isolation &&
        this.state.stages.length === 0 &&
        editingAgents(definition).length > 0
      ) {
        const inRepo = (await port.repoOf(this.state.cwd)) !== null;
        this.commit([{ type: 'isolation_chosen', ...defaultIsolation(definition, inRepo) }]);
      }
      const settings = workspaceSettings(this.state);
      if (settings?.isolation === 'worktree') {
        const ready = await port.prepare(this.taskId, known?.repo ?? this.state.cwd, settings);
        if (!known) this.commit([{ type: 'workspace_ready', ...ready }]);
        // a person's resolution of a merge conflict, left in the worktree, is the join's to commit
        else if (!this.takesResolution())
          await port.align(ready.path, this.taskId, known.head ?? null, known.base);
      }
    } catch (error) {
      this.commit([
        { type: 'task_failed', reason: (error as Error).message, stage: null, errorKind: 'workspace' },
      ]);
    }
    this.flush();
  }

  /**
   * Where a stage works: the task's directory, its worktree, or its fan-out branch's worktree
   * (made ready first; recorded). Null when that failed, and the task with it.
   */
  private workplace(activation: string): Workplace | Promise<Workplace | null> {
    if (!this.branchWorkspaces || !this.state.workspace) return { cwd: this.state.cwd, branch: null };
    return this.branchWorkplace(this.branchWorkspaces, activation);
  }

  private async branchWorkplace(branches: BranchWorkspaces, activation: string): Promise<Workplace | null> {
    try {
      const { place, events } = await branches.workplaceFor(activation);
      if (events.length > 0) this.commit(events);
      return place;
    } catch (error) {
      this.commit([
        { type: 'task_failed', reason: (error as Error).message, stage: null, errorKind: 'workspace' },
      ]);
      return null;
    }
  }

  private takesResolution(): boolean {
    return [...this.state.activations.values()].some(
      (a) => a.status !== 'done' && a.conflict?.handled && a.conflict.resolver === null,
    );
  }

  /** Commits what a stage changed in its worktree; one commit at a time. */
  private commitWork(stage: number, agent: string, place: Workplace): Promise<string | null> {
    const port = this.ports.workspace;
    if (!this.state.workspace || !port) return Promise.resolve(null);
    return this.serialGit(() => port.commit(place.cwd, { task: this.taskId, stage, agent }));
  }

  /** Git work one operation at a time: worktrees of one repository share its refs and locks. */
  private serialGit<T>(work: () => Promise<T>): Promise<T> {
    const next = this.gitQueue.then(work);
    this.gitQueue = next.then(
      () => {},
      () => {},
    );
    return next;
  }

  private needsMerge(): boolean {
    const workspace = this.state.workspace;
    return Boolean(
      this.ports.workspace &&
        workspace &&
        !workspace.merged &&
        workspaceSettings(this.state)?.merge === 'on_complete',
    );
  }

  /** merge: on_complete — the task branch goes into base before the task is completed. */
  private async mergeAndComplete(): Promise<void> {
    const workspace = this.state.workspace!;
    const settings = workspaceSettings(this.state)!;
    await this.gitQueue;
    // the work is done and committed on the task branch whatever happens here: a merge that
    // cannot be made is reported and left for `troupe merge`, never a task stuck running
    let merge: TaskEvent;
    try {
      const result = await this.ports.workspace!.merge(workspace.repo, this.taskId, settings, workspace.base);
      merge =
        'conflict' in result
          ? { type: 'workspace_conflict', into: workspace.base, files: result.conflict }
          : { type: 'workspace_merged', into: workspace.base, how: result.merged, sha: result.sha };
    } catch (error) {
      merge = { type: 'workspace_merge_failed', into: workspace.base, reason: (error as Error).message };
    }
    this.commit([merge, { type: 'task_completed' }]);
  }

  /**
   * The stage met `provider`'s limit: with a fallback still open it goes there at once
   * (`retryAt` now; the fallback is chosen when it restarts), otherwise it waits for the reset.
   */
  private rateLimited(
    step: Extract<Step, { kind: 'start_stage' }>,
    provider: string,
    resetAt: string,
    message: string,
    choices: ReadonlyArray<{ runtime: string }>,
    closed: ReadonlyMap<string, string>,
    meta?: Record<string, string | number | boolean>,
  ): TaskEvent {
    const fallbackOpen = choices.some((c) => c.runtime !== provider && !closed.has(c.runtime));
    return {
      type: 'rate_limited',
      stage: step.stage,
      activation: step.activation,
      agent: step.agent,
      provider,
      resetAt,
      ...(fallbackOpen ? { retryAt: new Date().toISOString() } : {}),
      message,
      ...(meta ? { meta } : {}),
    };
  }

  /** When to try again (limitResetTime), counting the limits this stage has met in this process. */
  private resetTime(given: Date | undefined, activationId: string): string {
    const activation = this.state.activations.get(activationId);
    const previous = activation?.stage ? this.rateLimitsAt(activation.stage) : 0;
    return limitResetTime(given, previous, new Date()).toISOString();
  }

  private rateLimitsAt(stage: number): number {
    return this.rateLimitCounts.get(stage) ?? 0;
  }

  private async evaluateGate(step: Extract<Step, { kind: 'evaluate_gate' }>): Promise<void> {
    const node = this.agent(step.agent);
    const verifier = node.gate?.verifier ? this.agent(node.gate.verifier) : null;
    const sha = this.state.stages[step.stage - 1]?.commit ?? null;
    const workspace = this.state.workspace;
    this.flush();
    await this.syncFiles();
    // worker != tester: the verifier judges a fresh checkout of the worker's commit, not its directory
    const judged =
      verifier && workspace && sha && this.ports.workspace
        ? await this.ports.workspace.verifyAt(workspace.repo, this.taskId, sha, (cwd) =>
            this.judge(step, node, verifier, cwd),
          )
        : await this.judge(step, node, verifier, this.state.cwd);
    if (!judged) return;
    this.commit([
      { type: 'gate_decided', stage: step.stage, agent: node.id, ...judged.decision, by: judged.by },
      ...(verifier
        ? [
            {
              type: 'verified' as const,
              stage: step.stage,
              sha,
              verifier: verifier.id,
              decision: judged.decision.decision,
            },
          ]
        : []),
    ]);
  }

  /** The last commit, judged by the verifier before the task may complete. */
  private async verifyFinal(step: Extract<Step, { kind: 'verify_final' }>): Promise<void> {
    const node = this.agent(step.agent);
    const verifier = this.agent(node.gate!.verifier!);
    const workspace = this.state.workspace!;
    const stage = [...this.state.stages].reverse().find((s) => s.commit === step.sha)!;
    const asGate = {
      kind: 'evaluate_gate' as const,
      stage: stage.n,
      agent: node.id,
      gate: node.gate!.type === 'command' ? ('command' as const) : ('llm' as const),
    };
    this.flush();
    await this.gitQueue;
    const judged = await this.ports.workspace!.verifyAt(workspace.repo, this.taskId, step.sha, (cwd) =>
      this.judge(asGate, node, verifier, cwd),
    );
    if (!judged) return;
    this.commit([
      {
        type: 'verified',
        stage: stage.n,
        sha: step.sha,
        verifier: verifier.id,
        decision: judged.decision.decision,
      },
    ]);
  }

  /** `entry_point: auto`: the router's pick of the first agent. */
  private async routeEntry(): Promise<void> {
    this.flush();
    this.commit([await askEntryRouter(this.callContext())]);
  }

  /** One gate's verdict, judged in `cwd`; null when the task failed instead. */
  private async judge(
    step: Extract<Step, { kind: 'evaluate_gate' }>,
    node: AgentNode,
    verifier: AgentNode | null,
    cwd: string,
  ): Promise<Judged | null> {
    const judged = await judgeOutput(this.callContext(), step, node, verifier, cwd);
    if (!('failed' in judged)) return judged;
    this.commit([judged.failed]);
    return null;
  }

  private callContext(): CallContext {
    return { taskId: this.taskId, state: this.state, ports: this.ports, signal: this.abort.signal };
  }

  private agent(id: string): AgentNode {
    const node = findNode(this.state.definition, id);
    if (node?.type !== 'agent') throw new Error(`no agent ${id}`);
    return node;
  }

  /**
   * Applies events to the state at once and queues them; `flush` appends the queue in one
   * transaction. The loop flushes before it waits and before any runtime, gate command or
   * person is involved, so every event is committed before the next stage starts, and a stage's
   * completion, its handoff and the next stage's start cost one commit.
   */
  private commit(events: TaskEvent[]): void {
    this.batchAt ??= new Date().toISOString();
    for (const event of events) {
      this.state = applyEvent(this.state, {
        ...event,
        seq: this.state.lastSeq,
        taskId: this.taskId,
        at: this.batchAt,
      });
    }
    this.batch.push(...events);
  }

  /** Runs `action` once the events committed so far are in the store. */
  private afterFlush(action: () => void): void {
    this.afterFlushActions.push(action);
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    const events = this.batch;
    const at = this.batchAt!;
    this.batch = [];
    this.batchAt = null;
    const stored = this.ports.store.append(this.taskId, events, { status: this.state.status }, at);
    this.passOwn(stored);
    this.state.lastSeq = stored.at(-1)?.seq ?? this.state.lastSeq;
    if (events.some((e) => e.type !== 'stage_output')) this.scheduleFiles();
    for (const event of stored) {
      this.ports.observer?.onEvent?.(event, this.state);
      if (event.type === 'decision')
        this.afterFlush(() => this.ports.decisionLog?.(decisionLine(this.taskId, at, event)));
    }
    for (const action of this.afterFlushActions.splice(0)) {
      try {
        action();
      } catch {
        // mail and the decision log are courtesies: one that cannot be written never fails the task
      }
    }
    this.wake();
  }

  /**
   * The human-readable files follow the log within 250 ms, and are brought up to date before
   * any runtime that may read them starts and when the run stops.
   */
  private scheduleFiles(): void {
    this.filesTimer ??= setTimeout(() => void this.syncFiles(), 250);
  }

  /**
   * Brings the files up to date; resolves when they are on disk. A file that cannot be written
   * never fails the task: it is a projection, and a resumed task rewrites it.
   */
  private syncFiles(): Promise<void> {
    if (this.filesTimer) clearTimeout(this.filesTimer);
    this.filesTimer = null;
    this.ports.files.sync(this.state);
    return this.ports.files.flushed().catch(() => {});
  }

  /**
   * The poller need not read back what this process just wrote. When nothing at all was written
   * between its place and these events, it moves past them; otherwise it skips them as it meets
   * them (a foreign event may lie in between).
   */
  private passOwn(stored: StoredEvent[]): void {
    if (stored.length === 0) return;
    if (stored[0]!.seq === this.pollCursor + 1) {
      this.pollCursor = stored.at(-1)!.seq;
      return;
    }
    for (const event of stored) this.ownSeqs.add(event.seq);
  }

  /**
   * Events other processes appended to this task (a cancel, a person's chunk edits) are
   * applied as they arrive; a cancel aborts whatever is running.
   */
  private pollForeignEvents(): void {
    for (const event of this.ports.store.events(this.taskId, this.pollCursor)) {
      this.pollCursor = event.seq;
      if (this.ownSeqs.delete(event.seq)) continue;
      this.state = applyEvent(this.state, event);
      this.scheduleFiles();
      this.ports.observer?.onEvent?.(event, this.state);
    }
    if (this.state.status === 'cancelled') {
      this.stopped ??= new StateError(`task ${this.taskId} was cancelled`);
      this.abort.abort(new RuntimeError('cancelled', 'task cancelled'));
    }
    this.wake();
  }
}
