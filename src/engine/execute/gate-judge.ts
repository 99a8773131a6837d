import type { TaskEvent } from '../../core/events.js';
import { isTroupeServer } from '../../core/mcp-call.js';
import { paramEnv } from '../../core/param-env.js';
import type { AgentNode } from '../../core/pipeline.js';
import { attemptEnv, type RuntimeRequest, taskProcessTag } from '../../core/runtime.js';
import { gateUserMessage, parseGateDecision } from '../../pipeline/lang/gate-decision.js';
import type { StepOf } from '../plan/plan.js';
import { concreteEffort, concreteModel } from '../plan/stage-route.js';
import type { CallContext } from './call-context.js';
import { gatePrompt } from './prompt.js';
import { asRuntimeError, invokeRuntime } from './run-support.js';

/** A gate's verdict and who gave it. */
export interface Judged {
  decision: { decision: 'approved' | 'rejected'; reason: string };
  by: 'llm' | 'command' | 'script';
}

/**
 * One llm or command gate's verdict on a stage's output, judged in `cwd` (a verifier's fresh
 * checkout, or the task's directory). A gate call that fails is a rejection saying why; a script
 * with no decision for it fails the task instead (`failed`).
 */
export async function judgeOutput(
  ctx: CallContext,
  step: StepOf<'evaluate_gate'>,
  node: AgentNode,
  verifier: AgentNode | null,
  cwd: string,
): Promise<Judged | { failed: TaskEvent }> {
  const gate = node.gate!;
  const output = ctx.state.stages[step.stage - 1]!.output;
  const timeoutMs = (gate.timeout ?? ctx.state.gateConfig.timeout) * 1000;
  const attempt = attemptEnv(ctx.taskId, step.stage, ctx.state.stages[step.stage - 1]!.attempt);
  if (step.gate === 'command') {
    const result = await ctx.ports.commandGate(gate.command ?? 'false', {
      cwd,
      timeoutMs,
      signal: ctx.signal,
      processTag: taskProcessTag(ctx.taskId),
      env: {
        ...paramEnv(ctx.state.definition.params),
        ...attempt,
        TROUPE_AGENT: node.id,
        TROUPE_OUTPUT: output.slice(0, 100_000),
      },
    });
    return { decision: result, by: 'command' };
  }
  const request: RuntimeRequest = {
    agentId: node.id,
    purpose: 'gate',
    prompt: gateUserMessage(gatePrompt(ctx.state, node, output, step.piece ?? null), output),
    systemPrompt: ctx.state.gateConfig.system_prompt,
    model: gate.model ?? concreteModel(verifier?.model) ?? ctx.state.gateConfig.model,
    effort: concreteEffort(verifier?.effort),
    cwd,
    // a verdict is no stage: troupe's own server (directives for the executor) is left out
    mcp: verifier?.mcp.filter((server) => !isTroupeServer(server)) ?? [],
    extraFlags: verifier?.cli_flags ?? [],
    timeoutMs,
    signal: ctx.signal,
    resumeSessionId: null,
    previousMeta: Array.from({ length: ctx.state.gateCalls[node.id] ?? 0 }, () => ({})),
    rawLogPath: ctx.ports.rawLogPath?.(ctx.taskId, `${step.stage}-gate`) ?? null,
    processTag: taskProcessTag(ctx.taskId),
    env: attempt,
  };
  try {
    // a verifier judges on its own runtime; otherwise the gate's (or the agent's) runtime
    const runtime = verifier
      ? ctx.ports.runtimeFor(ctx.state, verifier, 'stage')
      : ctx.ports.runtimeFor(ctx.state, node, 'gate');
    const result = await invokeRuntime(ctx.signal, runtime, request, () => {});
    return { decision: parseGateDecision(result.text), by: ctx.state.script ? 'script' : 'llm' };
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    const failure = asRuntimeError(error);
    if (failure.kind === 'script_missing') {
      return {
        failed: { type: 'task_failed', reason: failure.message, stage: step.stage, errorKind: failure.kind },
      };
    }
    return {
      decision: { decision: 'rejected', reason: `Gate evaluation failed: ${failure.message}` },
      by: 'llm',
    };
  }
}
