import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiagnosticSink } from '../diagnostics.js';
import { codexRuntime, workflowPipeline, workflowPipelineYaml } from './pipeline.js';
import { loadWorkflow } from './validate.js';
import { readWorkflow } from './workflow.js';

describe('a WORKFLOW.md as a pipeline', () => {
  it('maps codex app-server and codex exec to the codex runtime, anything else to runtime: command', () => {
    expect(codexRuntime('codex app-server')).toEqual({ runtime: 'codex', dropped: null });
    expect(codexRuntime(' codex exec --full-auto')).toEqual({ runtime: 'codex', dropped: '--full-auto' });
    expect(codexRuntime('npx codex app-server')).toEqual({
      runtime: 'command',
      argv: ['bash', '-lc', 'npx codex app-server'],
    });
  });

  it('is one codex agent whose prompt is the input, with the timeouts, model, effort and sandbox mapped', () => {
    const text =
      '---\ncodex:\n  turn_timeout_ms: 90500\n  thread_sandbox: read-only\n  reasoning_effort: medium\n---\nDo {{ issue.title }}';
    const workflow = readWorkflow(text, '/repo/WORKFLOW.md', new DiagnosticSink())!;
    const pipeline = workflowPipeline(workflow, 'symphony');
    expect(pipeline).toMatchObject({ name: 'symphony', file: '/repo/WORKFLOW.md' });
    expect(pipeline.workspace).toMatchObject({ isolation: 'worktree', merge: 'never' });
    expect(pipeline.agents).toHaveLength(1);
    expect(pipeline.agents[0]).toMatchObject({
      id: 'codex',
      runtime: 'codex',
      model: null,
      effort: 'medium',
      permissions: 'read_only',
      timeout: 91,
      context_strategy: 'none',
      system_prompt: '{{ input }}',
    });
  });

  it('loadWorkflow gives the watcher the workflow and its pipeline, or the first error where it is', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-symphony-'));
    writeFileSync(join(dir, 'WORKFLOW.md'), '---\ntracker:\n  kind: memory\n---\nDo {{ issue.title }}\n');
    const { workflow, pipeline } = loadWorkflow(join(dir, 'WORKFLOW.md'));
    expect(workflow.settings.tracker.kind).toBe('memory');
    expect(pipeline.agents.map((a) => a.id)).toEqual(['codex']);
    writeFileSync(join(dir, 'WORKFLOW.md'), 'Do {{ issue.titel }}\n');
    expect(() => loadWorkflow(join(dir, 'WORKFLOW.md'))).toThrow(
      /WORKFLOW.md:1:7: template_render_error: undefined variable: issue.titel/,
    );
  });

  it('says what troupe watch does with hooks, max_turns and assignee: max_turns differs', () => {
    const text = '---\nhooks:\n  after_create: git clone x .\nagent:\n  max_turns: 7\n---\nDo it';
    const { mapping } = workflowPipelineYaml(readWorkflow(text, '/repo/WORKFLOW.md', new DiagnosticSink())!);
    const about = (word: string) => mapping.filter((m) => m.what.startsWith(word));
    expect(about('agent.max_turns')).toEqual([
      {
        kind: 'differs',
        what: expect.stringMatching(
          /^agent\.max_turns 7: .*another turn 1 s later, up to 7 in a row, then stops.*previous turn's/,
        ),
      },
    ]);
    expect(about('hooks')).toEqual([
      { kind: 'differs', what: expect.stringMatching(/in the issue's task worktree.*\$PWD/) },
    ]);
    expect(about('tracker (assignee too')).toHaveLength(1);
  });
});
