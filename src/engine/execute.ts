import type { TaskMail } from '../bus/task-mail.js';
import { StateError, TaskBusyError } from '../errors.js';
import { type AgentNode, findNode } from '../pipeline/types.js';
import { runCommandGate } from '../runtimes/command-gate.js';
import { type Runtime, RuntimeError, type RuntimeRequest } from '../runtimes/runtime.js';
import { withCost } from '../scheduler/prices.js';
import type { EventStore } from '../store/event-store.js';
import { currentHolder } from '../store/sqlite/sqlite-store.js';
import type { TaskFiles } from '../store/task-files.js';
import type { TaskWorkspace } from '../workspace/task-workspace.js';
import { chunkEventsFromOutput, usesChunks } from './chunks.js';
import { parseSendDirectives } from './directives.js';
import { isTerminal, type StoredEvent, type TaskEvent } from './events.js';
import { gateUserMessage, parseGateDecision } from './gate-decision.js';
import { parseVerdict } from './human-verdict.js';
import { nextSteps, type Step, stepKey } from './plan.js';
import { gatePrompt, readsVariable, stagePrompt, turnPrompt } from './prompt.js';
import {
  asRuntimeError,
  OutputBuffer,
  resumableSession,
  StopRequested,
  sleepUntil,
  timedOut,
} from './run-support.js';
import { applyEvent, foldEvents, type TaskState } from './task-state.js';

/**
 * The executor: performs the planner's steps through ports (runtimes, the store, people) and
 * appends what happened. It runs a task until it ends or waits for a person; fan-out
 * branches run at the same time. Every step is safe to run twice: a crash between doing and
 * recording re-does the step on resume, and nothing recorded is done again.
 */

export interface HumanResponder {
  /** An answer available without waiting (a script's `human:` entry), or undefined. */
  answer(agent: string, index: number): string | undefined;
}

export interface RunObserver {
  onEvent?(event: StoredEvent, state: TaskState): void;
  onText?(stage: number, agent: string, text: string): void;
}

export interface ExecutorPorts {
  store: EventStore;
  files: TaskFiles;
  runtimeFor(state: TaskState, node: AgentNode, purpose: 'stage' | 'gate'): Runtime;
  human: (state: TaskState) => HumanResponder;
  observer?: RunObserver;
  /** How often another process's cancel is looked for. */
  pollMs?: number;
  /** How often streamed output is committed as stage_output events. */
  flushMs?: number;
  /** Where a runtime keeps the raw stream of a call (`.troupe/tasks/<id>/raw/<name>.jsonl`). */
  rawLogPath?: (taskId: string, name: string) => string;
  /** Git worktrees, for pipelines with `workspace: {isolation: worktree}`. */
  workspace?: TaskWorkspace;
  /** The message bus: people are told when a task waits for them; agents read and send mail. */
  mail?: TaskMail;
  /**
   * Stops this process's run without ending the task (a server shutting down): runtimes are
   * aborted and nothing more is recorded, so the stage in progress is run again on resume.
   */
  stop?: AbortSignal;
}

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

  constructor(
    private readonly taskId: string,
    private readonly ports: ExecutorPorts,
  ) {
    this.state = foldEvents(ports.store.events(taskId));
    this.pollCursor = this.state.lastSeq;
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
      this.abort.abort();
      await Promise.allSettled(this.inflight.values());
      void this.syncFiles();
    }
    if (this.stopped && !(this.stopped instanceof StateError) && !(this.stopped instanceof StopRequested))
      throw this.stopped;
    // the store may know better (another process cancelled the task)
    if (this.stopped) this.state = foldEvents(this.ports.store.events(this.taskId));
    return this.state;
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
    const timeoutS = node.timeout ?? this.state.timeouts[node.runtime] ?? 600;
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
      model: node.model,
      effort: node.effort ?? null,
      cwd: this.state.cwd,
      mcp: node.mcp,
      extraFlags: node.cli_flags,
      timeoutMs: timeoutS * 1000,
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
    // the agent's runtime, or the first fallback whose provider is open
    const closed = new Map(this.ports.store.closedProviders(new Date()).map((w) => [w.provider, w.resetAt]));
    const choices = [{ runtime: node.runtime, model: node.model }, ...(node.fallback ?? [])];
    const choice = choices.find((c) => !closed.has(c.runtime));
    if (!choice) {
      // no call while every provider it may use is closed: wait with everything else that needs them
      const reopens = choices.map((c) => closed.get(c.runtime)!).sort()[0]!;
      this.commit([
        this.rateLimited(
          step,
          node.runtime,
          reopens,
          `${choices.map((c) => c.runtime).join(', ')} ${choices.length > 1 ? 'are' : 'is'} closed until ${reopens}`,
        ),
      ]);
      return;
    }
    const provider = choice.runtime;
    const runner = choice === choices[0] ? node : { ...node, runtime: choice.runtime, model: choice.model };
    request.model = runner.model;
    if (runner !== node) {
      this.commit([
        {
          type: 'decision',
          stage: step.stage,
          agent: node.id,
          kind: 'fallback',
          from: { runtime: node.runtime, model: node.model },
          to: { runtime: choice.runtime, model: choice.model },
          reason: `${node.runtime} is closed until ${closed.get(node.runtime)}`,
        },
      ]);
    }
    // what is recorded so far is committed before the runtime runs (a store error is not the runtime's)
    this.flush();
    try {
      const runtime = this.ports.runtimeFor(this.state, runner, 'stage');
      if (runtime.name !== 'scripted') await this.syncFiles();
      const result = await this.invoke(runtime, request, (text) => {
        streamed.add(text);
        this.ports.observer?.onText?.(step.stage, node.id, text);
      });
      streamed.close();
      const sha = await this.commitWork(step.stage, node.id);
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
          usage: withCost(result.usage, runner.model, this.state.prices),
          durationMs: Date.now() - started,
          ...(result.meta ? { meta: result.meta } : {}),
        },
        ...(sha ? [{ type: 'workspace_committed' as const, stage: step.stage, sha }] : []),
        ...chunkEvents,
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
        // with a fallback still open the stage goes there at once; otherwise it waits for the reset
        const other = choices.some((c) => c.runtime !== provider && !closed.has(c.runtime));
        const retryAt = other ? new Date().toISOString() : resetAt;
        this.commit([this.rateLimited(step, provider, retryAt, failure.message, failure.options.meta)]);
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
   * `workspace: {isolation: worktree}`: the task gets its own worktree and branch before its
   * first stage; a resumed task finds and reuses the one it had.
   */
  private async prepareWorkspace(): Promise<void> {
    const settings = this.state.definition.workspace;
    const port = this.ports.workspace;
    if (!port || settings?.isolation !== 'worktree') return;
    const known = this.state.workspace;
    try {
      const ready = await port.prepare(this.taskId, known?.repo ?? this.state.cwd, settings);
      if (!known) this.commit([{ type: 'workspace_ready', ...ready }]);
      else {
        const last = [...this.state.stages].reverse().find((s) => s.commit)?.commit ?? null;
        await port.align(ready.path, this.taskId, last, known.base);
      }
    } catch (error) {
      this.commit([
        { type: 'task_failed', reason: (error as Error).message, stage: null, errorKind: 'workspace' },
      ]);
    }
    this.flush();
  }

  /** Commits what a stage changed in the task's worktree; one commit at a time. */
  private commitWork(stage: number, agent: string): Promise<string | null> {
    const workspace = this.state.workspace;
    const port = this.ports.workspace;
    if (!workspace || !port) return Promise.resolve(null);
    const next = this.gitQueue.then(() => port.commit(workspace.path, { task: this.taskId, stage, agent }));
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
        this.state.definition.workspace?.merge === 'on_complete',
    );
  }

  /** merge: on_complete — the task branch goes into base before the task is completed. */
  private async mergeAndComplete(): Promise<void> {
    const workspace = this.state.workspace!;
    const settings = this.state.definition.workspace!;
    await this.gitQueue;
    const result = await this.ports.workspace!.merge(workspace.repo, this.taskId, settings, workspace.base);
    this.commit([
      'conflict' in result
        ? { type: 'workspace_conflict', into: workspace.base, files: result.conflict }
        : { type: 'workspace_merged', into: workspace.base, how: result.merged, sha: result.sha },
      { type: 'task_completed' },
    ]);
  }

  private rateLimited(
    step: Extract<Step, { kind: 'start_stage' }>,
    provider: string,
    resetAt: string,
    message: string,
    meta?: Record<string, string | number | boolean>,
  ): TaskEvent {
    return {
      type: 'rate_limited',
      stage: step.stage,
      activation: step.activation,
      agent: step.agent,
      provider,
      resetAt,
      message,
      ...(meta ? { meta } : {}),
    };
  }

  /**
   * When to try again: the provider's own reset time when it is still ahead; otherwise (none
   * given, unparseable, or already past) a backoff that doubles with each limit this stage
   * has met, from 30 s up to 30 min.
   */
  private resetTime(given: Date | undefined, activationId: string): string {
    const now = Date.now();
    if (given && given.getTime() > now) return given.toISOString();
    const activation = this.state.activations.get(activationId);
    const previous = activation?.stage ? this.rateLimitsAt(activation.stage) : 0;
    return new Date(now + Math.min(30_000 * 2 ** previous, 30 * 60_000)).toISOString();
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

  /** One gate's verdict on a stage's output, judged in `cwd`; null when the task failed instead. */
  private async judge(
    step: Extract<Step, { kind: 'evaluate_gate' }>,
    node: AgentNode,
    verifier: AgentNode | null,
    cwd: string,
  ): Promise<{
    decision: { decision: 'approved' | 'rejected'; reason: string };
    by: 'llm' | 'command' | 'script';
  } | null> {
    const gate = node.gate!;
    const output = this.state.stages[step.stage - 1]!.output;
    const timeoutMs = (gate.timeout ?? this.state.gateConfig.timeout) * 1000;
    if (step.gate === 'command') {
      const result = await runCommandGate(gate.command ?? 'false', {
        cwd,
        timeoutMs,
        signal: this.abort.signal,
        env: {
          TROUPE_TASK_ID: this.taskId,
          TROUPE_STAGE: String(step.stage),
          TROUPE_AGENT: node.id,
          TROUPE_OUTPUT: output.slice(0, 100_000),
        },
      });
      return { decision: result, by: 'command' };
    }
    const request: RuntimeRequest = {
      agentId: node.id,
      purpose: 'gate',
      prompt: gateUserMessage(gatePrompt(this.state, node, output), output),
      systemPrompt: this.state.gateConfig.system_prompt,
      model: gate.model ?? verifier?.model ?? this.state.gateConfig.model,
      effort: verifier?.effort ?? null,
      cwd,
      mcp: verifier?.mcp ?? [],
      extraFlags: verifier?.cli_flags ?? [],
      timeoutMs,
      signal: this.abort.signal,
      resumeSessionId: null,
      previousMeta: Array.from({ length: this.state.gateCalls[node.id] ?? 0 }, () => ({})),
      rawLogPath: this.ports.rawLogPath?.(this.taskId, `${step.stage}-gate`) ?? null,
    };
    try {
      // a verifier judges on its own runtime; otherwise the gate's (or the agent's) runtime
      const runtime = verifier
        ? this.ports.runtimeFor(this.state, verifier, 'stage')
        : this.ports.runtimeFor(this.state, node, 'gate');
      const result = await this.invoke(runtime, request, () => {});
      return { decision: parseGateDecision(result.text), by: this.state.script ? 'script' : 'llm' };
    } catch (error) {
      if (this.abort.signal.aborted) throw error;
      const failure = asRuntimeError(error);
      if (failure.kind === 'script_missing') {
        this.commit([
          { type: 'task_failed', reason: failure.message, stage: step.stage, errorKind: failure.kind },
        ]);
        return null;
      }
      return {
        decision: { decision: 'rejected', reason: `Gate evaluation failed: ${failure.message}` },
        by: 'llm',
      };
    }
  }

  /**
   * `entry_point: auto`: a router call picks the first agent (the script's `_router` entry under
   * --script). An answer that names no agent, or a failed call, falls back to the first agent,
   * and the event says so.
   */
  private async routeEntry(): Promise<void> {
    const pipeline = this.state.definition;
    const first = pipeline.agents[0]!;
    const runner = pipeline.agents.find((a): a is AgentNode => a.type === 'agent');
    const catalog = pipeline.agents
      .map((a) =>
        a.type === 'session'
          ? `- ${a.id}: [session] participants: [${a.participants.join(', ')}]`
          : `- ${a.id}: ${a.system_prompt.replace(/\s+/g, ' ').trim().slice(0, 150)}`,
      )
      .join('\n');
    const prompt = [
      'Pick the agent that should handle this request first.',
      '',
      `Request: ${this.state.input}`,
      '',
      'Agents:',
      catalog,
      '',
      `Answer with ONLY the agent id. If unsure, answer ${first.id}.`,
    ].join('\n');
    let answer: string;
    this.flush();
    try {
      if (!runner) throw new RuntimeError('crashed', 'no agent to route with');
      const runtime = this.ports.runtimeFor(this.state, runner, 'stage');
      const result = await this.invoke(
        runtime,
        {
          agentId: '_router',
          purpose: 'stage',
          prompt,
          systemPrompt: '',
          model: runner.model,
          effort: null,
          cwd: this.state.cwd,
          mcp: [],
          extraFlags: [],
          timeoutMs: 60_000,
          signal: this.abort.signal,
          resumeSessionId: null,
          previousMeta: [],
        },
        () => {},
      );
      answer = result.text.trim();
    } catch (error) {
      if (this.abort.signal.aborted) throw error;
      answer = `router failed: ${(error as Error).message}`;
    }
    const ids = new Set(pipeline.agents.map((a) => a.id));
    const named = answer.split(/[^A-Za-z0-9_-]+/).find((word) => ids.has(word));
    this.commit([
      {
        type: 'entry_routed',
        agent: named ?? first.id,
        fallback: named === undefined,
        answer: answer.slice(0, 500),
      },
    ]);
  }

  /** Runs one runtime call under the stage's timeout, streaming text to `onText`. */
  private async invoke(runtime: Runtime, request: RuntimeRequest, onText: (text: string) => void) {
    // one controller and one timer per call: cheaper than AbortSignal.timeout + AbortSignal.any
    const call = new AbortController();
    let timedOutNow = false;
    const timer = setTimeout(() => {
      timedOutNow = true;
      call.abort(timedOut(request.timeoutMs));
    }, request.timeoutMs);
    const cancel = () => call.abort(new RuntimeError('cancelled', 'task cancelled'));
    this.abort.signal.addEventListener('abort', cancel, { once: true });
    try {
      for await (const event of runtime.run({ ...request, signal: call.signal })) {
        if (event.type === 'text') onText(event.text);
        else if (event.type === 'result') return event;
        if (call.signal.aborted) break;
      }
    } catch (error) {
      if (timedOutNow) throw timedOut(request.timeoutMs);
      throw error;
    } finally {
      clearTimeout(timer);
      this.abort.signal.removeEventListener('abort', cancel);
    }
    if (timedOutNow) throw timedOut(request.timeoutMs);
    if (this.abort.signal.aborted) throw new RuntimeError('cancelled', 'cancelled');
    throw new RuntimeError('crashed', `runtime ${runtime.name} ended without a result`);
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
    for (const event of stored) this.ownSeqs.add(event.seq);
    this.state.lastSeq = stored.at(-1)?.seq ?? this.state.lastSeq;
    if (events.some((e) => e.type !== 'stage_output')) this.scheduleFiles();
    for (const event of stored) this.ports.observer?.onEvent?.(event, this.state);
    for (const action of this.afterFlushActions.splice(0)) {
      try {
        action();
      } catch {
        // mail is a courtesy: a bus that cannot be written never fails the task
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
