import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectTaskService } from '../../app/project.js';
import { taskJson } from '../../app/task-view.js';
import { type Runtime, RuntimeError } from '../../core/runtime.js';
import { defaultConfig } from '../../pipeline/config.js';
import { runCommandGate } from '../../runtimes/command-gate.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { TaskFiles } from '../../store/task-files.js';
import { agent, pipeline } from '../test-pipelines.js';
import { runTask } from './execute.js';

/** A runtime's warnings (a refused tool call, a skipped settings file) are the user's to see. */
describe('stage warnings', () => {
  const run = async (runtime: Runtime) => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-warnings-'));
    const store = openSqliteStore(join(root, '.troupe', 'troupe.db'));
    const service = projectTaskService(root, store, defaultConfig());
    const id = service.start({ pipeline: pipeline(agent('dev')), input: 'go' });
    const state = await runTask(id, {
      store,
      files: TaskFiles.forTask(root, id),
      runtimeFor: () => runtime,
      human: () => ({ answer: () => undefined }),
      commandGate: runCommandGate,
      pollMs: 50,
    });
    const events = [...store.events(id)];
    store.close();
    return { state, events };
  };

  it("records a runtime's warning as stage_warning, in its stage's record; a retry notice is not one", async () => {
    const { state, events } = await run({
      name: 'claude',
      async *run() {
        yield { type: 'notice', level: 'info', message: 'API retry 1/10 (rate_limit 429)' };
        yield {
          type: 'notice',
          level: 'warning',
          message: 'claude refused 1 tool call: mcp__github__search',
        };
        yield { type: 'result', text: 'done', usage: { input_tokens: 1, output_tokens: 1 } };
      },
    });
    const warning = events.find((e) => e.type === 'stage_warning');
    expect(warning).toMatchObject({ stage: 1, agent: 'dev', message: expect.stringContaining('refused') });
    // in the same transaction as the stage's completion
    expect(events.find((e) => e.type === 'stage_completed')?.at).toBe(warning?.at);
    expect(events.filter((e) => e.type === 'stage_warning')).toHaveLength(1);
    expect(taskJson(state).stages[0]?.warnings).toEqual(['claude refused 1 tool call: mcp__github__search']);
  });

  it('records the warning that explains a failure with the failure', async () => {
    const { state } = await run({
      name: 'gemini',
      async *run() {
        yield {
          type: 'notice',
          level: 'warning',
          message: 'Security Warning: Skipping system defaults file',
        };
        throw new RuntimeError('crashed', 'models/troupe-high-gemini-2.5-flash is not found');
      },
    });
    expect(state.status).toBe('failed');
    expect(state.stages[0]?.warnings).toEqual(['Security Warning: Skipping system defaults file']);
  });
});
