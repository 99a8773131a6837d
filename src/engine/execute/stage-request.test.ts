import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectTaskService } from '../../app/project.js';
import type { Runtime, RuntimeRequest } from '../../core/runtime.js';
import { defaultConfig } from '../../pipeline/config.js';
import { runCommandGate } from '../../runtimes/command-gate.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { TaskFiles } from '../../store/task-files.js';
import { agent, handoff, pipeline } from '../test-pipelines.js';
import { runTask } from './execute.js';

/** What a stage's request carries for the CLIs that can use it: the output_schema, the budget left. */
describe("a stage's request", () => {
  it("carries the agent's output_schema and what is left of the task's budget.usd", async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const root = mkdtempSync(join(tmpdir(), 'troupe-request-'));
    const store = openSqliteStore(join(root, '.troupe', 'troupe.db'));
    const service = projectTaskService(root, store, defaultConfig());
    const p = {
      ...pipeline(agent('a', { output_schema: schema, handoffs: [handoff('b')] }), agent('b')),
      budget: { tokens: null, usd: 1 },
    };
    const id = service.start({ pipeline: p, input: 'go' });
    const seen: RuntimeRequest[] = [];
    const runtime: Runtime = {
      name: 'claude',
      async *run(request) {
        seen.push(request);
        yield {
          type: 'result',
          text: '{"answer": "forty-two"}',
          usage: { input_tokens: 1, output_tokens: 1, cost_usd: 0.3 },
        };
      },
    };
    const state = await runTask(id, {
      store,
      files: TaskFiles.forTask(root, id),
      runtimeFor: () => runtime,
      human: () => ({ answer: () => undefined }),
      commandGate: runCommandGate,
      pollMs: 50,
    });
    store.close();
    expect(state.status).toBe('completed');
    expect(seen.map((r) => [r.outputSchema ?? null, r.maxBudgetUsd])).toEqual([
      [schema, 1],
      [null, 0.7],
    ]);
  });
});
