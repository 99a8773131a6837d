import { messageOf } from '../../core/errors.js';
import type { EventOf } from '../../core/events.js';
import type { AgentNode } from '../../core/pipeline.js';
import { RuntimeError, taskProcessTag } from '../../core/runtime.js';
import { ENTRY_ROUTER_ID, TIER_ROUTER_ID } from '../../core/script.js';
import type { RouterAdvice } from '../../scheduler/route.js';
import { concreteModel, earlierAdvice } from '../plan/stage-route.js';
import { parseTierAdvice, tierRouterPrompt } from '../plan/tier-router.js';
import type { CallContext } from './call-context.js';
import { invokeRuntime } from './run-support.js';

/** The two model calls that route work rather than do it: which agent starts, which tier runs. */

/** `routing.router`: the model's recommended tier for this agent (asked once per agent and task). */
export async function askTierRouter(ctx: CallContext, node: AgentNode): Promise<RouterAdvice | null> {
  const routing = ctx.state.routing;
  if (!routing?.router) return null;
  const earlier = earlierAdvice(ctx.state, node.id);
  if (earlier) return earlier;
  const router = { ...node, runtime: routing.router.runtime, model: routing.router.model };
  try {
    const answer = await routerCall(ctx, router, TIER_ROUTER_ID, tierRouterPrompt(ctx.state, node, routing));
    return parseTierAdvice(answer, Object.keys(routing.tiers));
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    return { error: `failed: ${messageOf(error).split('\n')[0]}` };
  }
}

/**
 * `entry_point: auto`: a router call picks the first agent (the script's `_router` entry under
 * --script). An answer that names no agent, or a failed call, falls back to the first agent,
 * and the event says so.
 */
export async function askEntryRouter(ctx: CallContext): Promise<EventOf<'entry_routed'>> {
  const pipeline = ctx.state.definition;
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
    `Request: ${ctx.state.input}`,
    '',
    'Agents:',
    catalog,
    '',
    `Answer with ONLY the agent id. If unsure, answer ${first.id}.`,
  ].join('\n');
  let answer: string;
  try {
    if (!runner) throw new RuntimeError('crashed', 'no agent to route with');
    answer = (await routerCall(ctx, runner, ENTRY_ROUTER_ID, prompt)).trim();
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    answer = `router failed: ${messageOf(error)}`;
  }
  const ids = new Set(pipeline.agents.map((a) => a.id));
  const named = answer.split(/[^A-Za-z0-9_-]+/).find((word) => ids.has(word));
  return {
    type: 'entry_routed',
    agent: named ?? first.id,
    fallback: named === undefined,
    answer: answer.slice(0, 500),
  };
}

/** One short call on `runner`'s runtime and model, outside any stage; its text. */
async function routerCall(
  ctx: CallContext,
  runner: AgentNode,
  agentId: string,
  prompt: string,
): Promise<string> {
  const result = await invokeRuntime(
    ctx.signal,
    ctx.ports.runtimeFor(ctx.state, runner, 'stage'),
    {
      agentId,
      purpose: 'stage',
      prompt,
      systemPrompt: '',
      model: concreteModel(runner.model),
      effort: null,
      cwd: ctx.state.cwd,
      mcp: [],
      extraFlags: [],
      timeoutMs: 60_000,
      signal: ctx.signal,
      resumeSessionId: null,
      previousMeta: [],
      processTag: taskProcessTag(ctx.taskId),
    },
    () => {},
  );
  return result.text;
}
