import { Hono } from 'hono';
import type { Usage } from '../../core/usage.js';
import { usageApi } from '../api/usage.js';
import type { ServerContext } from '../context.js';
import { handle } from '../handle.js';

/** Tokens and cost across tasks: in total, per pipeline and per agent. */
export function usageRoutes(ctx: ServerContext): Hono {
  const app = new Hono();
  handle(app, usageApi.usage, ({ reply }) => {
    const total = emptyUsage();
    const byPipeline: Record<string, Total & { tasks: number }> = {};
    const byAgent: Record<string, Total & { stages: number }> = {};
    const tasks = ctx.store.tasks({ limit: 1000 });
    for (const summary of tasks) {
      const state = ctx.cache.state(summary.id);
      add(total, state.usage);
      const pipeline = byPipeline[state.pipeline] ?? { ...emptyUsage(), tasks: 0 };
      byPipeline[state.pipeline] = pipeline;
      pipeline.tasks += 1;
      add(pipeline, state.usage);
      for (const stage of state.stages) {
        if (!stage) continue;
        const agent = byAgent[stage.agent] ?? { ...emptyUsage(), stages: 0 };
        byAgent[stage.agent] = agent;
        agent.stages += 1;
        add(agent, stage.usage);
      }
    }
    return reply(200, { tasks: tasks.length, total, by_pipeline: byPipeline, by_agent: byAgent });
  });
  return app;
}

type Total = Required<Omit<Usage, 'cost_estimated' | 'unknown'>>;

function emptyUsage(): Total {
  return { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cost_usd: 0 };
}

function add(into: Total, usage: Usage): void {
  into.input_tokens += usage.input_tokens;
  into.output_tokens += usage.output_tokens;
  into.cache_read_tokens += usage.cache_read_tokens ?? 0;
  into.cost_usd += usage.cost_usd ?? 0;
}
