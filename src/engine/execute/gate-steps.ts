import type { AgentNode } from '../../core/pipeline.js';
import { pieceGate } from '../plan/graph-plan.js';
import type { StepOf } from '../plan/plan.js';
import { type Judged, judgeOutput } from './gate-judge.js';
import type { RunContext } from './run-context.js';

/** The executor's gate steps: an llm or command gate's verdict, and the final verification. */

export async function evaluateGate(run: RunContext, step: StepOf<'evaluate_gate'>): Promise<void> {
  const node = gatedNode(run, step);
  const verifier = node.gate?.verifier ? run.agent(node.gate.verifier) : null;
  const sha = run.state.stages[step.stage - 1]?.commit ?? pieceHead(run, step);
  const workspace = run.state.workspace;
  run.events.flush();
  await run.files.sync();
  // worker != tester: the verifier (and a piece's checks) judge a fresh checkout of the worker's
  // commit, not its directory
  const judged =
    (verifier || step.piece) && workspace && sha && run.ports.workspace
      ? await run.ports.workspace.verifyAt(workspace.repo, run.taskId, sha, (cwd) =>
          judge(run, step, node, verifier, cwd),
        )
      : await judge(run, step, node, verifier, run.state.cwd);
  if (!judged) return;
  run.events.record([
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
export async function verifyFinal(run: RunContext, step: StepOf<'verify_final'>): Promise<void> {
  const node = run.agent(step.agent);
  const verifier = run.agent(node.gate!.verifier!);
  const workspace = run.state.workspace!;
  const stage = [...run.state.stages].reverse().find((s) => s.commit === step.sha)!;
  const asGate: StepOf<'evaluate_gate'> = {
    kind: 'evaluate_gate',
    stage: stage.n,
    agent: node.id,
    gate: node.gate!.type === 'command' ? 'command' : 'llm',
  };
  run.events.flush();
  await run.workspace.idle();
  const judged = await run.ports.workspace!.verifyAt(workspace.repo, run.taskId, step.sha, (cwd) =>
    judge(run, asGate, node, verifier, cwd),
  );
  if (!judged) return;
  run.events.record([
    {
      type: 'verified',
      stage: stage.n,
      sha: step.sha,
      verifier: verifier.id,
      decision: judged.decision.decision,
    },
  ]);
}

/** A piece whose worker committed nothing this stage is judged at its branch's head. */
function pieceHead(run: RunContext, step: StepOf<'evaluate_gate'>): string | null {
  const piece = step.piece ? run.state.plan?.pieces.get(step.piece) : undefined;
  return piece ? (run.state.branchWorkspaces.get(piece.lineage)?.head ?? null) : null;
}

/** The agent with the gate that judges this step: its own, or the plan's for its piece. */
function gatedNode(run: RunContext, step: StepOf<'evaluate_gate'>): AgentNode {
  const node = run.agent(step.agent);
  if (!step.piece) return node;
  return { ...node, gate: pieceGate(run.state, run.state.stages[step.stage - 1]!.activation) };
}

/**
 * One gate's verdict, judged in `cwd`; null when the task failed instead. A piece's acceptance
 * checks (a command on an llm gate) run first: the verifier is asked only once they pass.
 */
async function judge(
  run: RunContext,
  step: StepOf<'evaluate_gate'>,
  node: AgentNode,
  verifier: AgentNode | null,
  cwd: string,
): Promise<Judged | null> {
  if (step.piece && step.gate === 'llm' && node.gate?.command) {
    const checks = await judge(run, { ...step, gate: 'command' }, node, null, cwd);
    if (checks?.decision.decision !== 'approved') return checks;
  }
  const judged = await judgeOutput(run, step, node, verifier, cwd);
  if (!('failed' in judged)) return judged;
  run.events.record([judged.failed]);
  return null;
}
