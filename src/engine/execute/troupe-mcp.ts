import { isTroupeServer, type TroupeMcpCall } from '../../core/mcp-call.js';
import { type AgentNode, findNode, type McpServer } from '../../core/pipeline.js';
import { directiveText } from '../../pipeline/lang/directives.js';
import { directiveTargets } from '../plan/handoffs.js';
import { asksOnDemand, type StepOf } from '../plan/plan.js';
import type { RunContext } from './run-context.js';

/**
 * `mcp: [troupe]` in a stage: the call's identity and what it may do, the concrete server the
 * runtime starts, and, once the call ends, its tool calls as the text directives they stand for.
 */
export class StageMcp {
  private constructor(
    private readonly run: RunContext,
    readonly call: TroupeMcpCall | null,
  ) {}

  static of(run: RunContext, step: StepOf<'start_stage'>, node: AgentNode): StageMcp {
    const wanted = run.ports.troupeMcp && node.mcp.some(isTroupeServer);
    return new StageMcp(run, wanted ? mcpCall(run, step, node) : null);
  }

  /** The agent's servers, `troupe` made concrete for this call. */
  servers(node: AgentNode): McpServer[] {
    const { call } = this;
    const port = this.run.ports.troupeMcp;
    if (!call || !port) return node.mcp;
    return node.mcp.map((server) => (isTroupeServer(server) ? port.server(call) : server));
  }

  /** The call's output with its tool calls' directives before the agent's own text. */
  output(text: string): string {
    const port = this.run.ports.troupeMcp;
    if (!this.call || !port) return text;
    const directives = directiveText(port.directives(this.call), this.call.voteKeyword);
    return directives ? `${directives}\n${text}` : text;
  }
}

function mcpCall(run: RunContext, step: StepOf<'start_stage'>, node: AgentNode): TroupeMcpCall {
  const { state } = run;
  let voteKeyword: string | null = null;
  if (step.turn && !step.turn.summary) {
    const session = findNode(state.definition, state.activations.get(step.activation)!.agent);
    if (session?.type === 'session') voteKeyword = session.consensus.keyword;
  }
  return {
    taskId: run.taskId,
    agent: node.id,
    stage: step.stage,
    attempt: step.attempt,
    // a session turn hands nothing off: the session's own handoffs do
    handoffTargets: step.turn ? [] : directiveTargets(state.definition, node),
    canAsk: asksOnDemand(node),
    voteKeyword,
  };
}
