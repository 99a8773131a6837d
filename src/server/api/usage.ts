import { z } from 'zod';
import { json, route } from './define.js';
import { Usage } from './tasks.js';

/** Tokens and cost across tasks: in total, per pipeline and per agent. */

const Total = Usage.required({ cache_read_tokens: true, cost_usd: true }).omit({ cost_estimated: true });

export const UsageReport = z.strictObject({
  tasks: z.int().describe('how many tasks are counted: the latest 1000'),
  total: Total,
  by_pipeline: z.record(z.string(), Total.extend({ tasks: z.int() })),
  by_agent: z.record(z.string(), Total.extend({ stages: z.int() })),
});

export const usageApi = {
  usage: route({
    method: 'get',
    path: '/api/usage',
    summary: 'tokens and cost: in total, per pipeline, per agent (the latest 1000 tasks)',
    responses: { 200: json('usage', UsageReport) },
  }),
};
