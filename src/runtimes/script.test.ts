import { describe, expect, it } from 'vitest';
import { ScriptError } from '../core/errors.js';
import { loadPipelineText } from '../pipeline/load.js';
import { parseScript } from './script.js';

const pipeline = loadPipelineText(
  'agents:\n  - id: frontend\n    runtime: claude\n    handoffs: [{ to: backend }]\n  - id: backend\n    runtime: claude\n    gate: { type: llm }\n  - id: unused\n    runtime: claude\n',
  '<inline>',
  { name: 'team' },
);

function check(text: string, start?: string) {
  const warnings: string[] = [];
  const script = parseScript(text, 's.yaml', {
    pipeline,
    ...(start ? { start } : {}),
    warn: (line, hint) => warnings.push(hint ? `${line} (${hint})` : line),
  });
  return { script, warnings };
}

function thrown(run: () => unknown): { message: string; hint?: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ScriptError);
    const { message, hint } = error as ScriptError;
    return { message, ...(hint ? { hint } : {}) };
  }
  throw new Error('expected a ScriptError');
}

describe('a script checked against its pipeline', () => {
  it('a key naming no agent is an error at the key, with a did-you-mean', () => {
    expect(thrown(() => check('agents:\n  frontend: [hi]\n  backnd: [hi]\n'))).toEqual({
      message: 's.yaml:3:3: agents.backnd: pipeline `team` has no agent `backnd`',
      hint: 'did you mean `backend`?',
    });
    expect(thrown(() => check('gates:\n  bakend: [approved]\n')).message).toBe(
      's.yaml:2:3: gates.bakend: pipeline `team` has no agent `bakend`',
    );
    expect(thrown(() => check('human:\n  nobody: [yes]\n'))).toEqual({
      message: 's.yaml:2:3: human.nobody: pipeline `team` has no agent `nobody`',
      hint: 'its agents: frontend, backend, unused',
    });
  });

  it('a verifier needs no reply of its own: it judges through the gate of the agent it verifies', () => {
    const planned = loadPipelineText(
      'agents:\n  - id: planner\n    runtime: claude\n    plan: { worker: builder, verifier: tester }\n  - id: builder\n    runtime: claude\n  - id: tester\n    runtime: claude\n',
      '<inline>',
      { name: 'graph' },
    );
    const warnings: string[] = [];
    parseScript('agents:\n  planner: [plan]\n  builder: [built]\ngates:\n  builder: [approved]\n', 's.yaml', {
      pipeline: planned,
      warn: (line) => warnings.push(line),
    });
    expect(warnings).toEqual([]);
  });

  it('agents and llm gates the run can reach with no entry are a warning, not an error', () => {
    expect(check('agents:\n  frontend: [hi]\n').warnings).toEqual([
      's.yaml:1:1: warning: no reply for `backend`: a stage of theirs fails (script_missing) (add `agents: {<id>: ["reply"]}` for each, unless the run cannot get there)',
      's.yaml:1:1: warning: no gate decision for `backend`: their llm gate fails (script_missing) (add `gates: {<id>: [approved]}` for each)',
    ]);
    // `unused` cannot be reached from the entry agent, so it needs nothing
    expect(
      check('agents:\n  frontend: [hi]\n  backend: [ok]\ngates:\n  backend: [approved]\n').warnings,
    ).toEqual([]);
    expect(check('# only comments\n').warnings[0]).toMatch(/no reply for `frontend`, `backend`/);
    expect(check('agents:\n  frontend: [hi]\n', 'unused').warnings[0]).toMatch(/no reply for `unused`:/);
  });

  it('without a pipeline only the file itself is checked', () => {
    expect(parseScript('agents:\n  anyone: [hi]\n', 's.yaml').agents).toEqual({ anyone: ['hi'] });
  });

  it('errors of the file itself say where', () => {
    expect(() => parseScript('agents:\n  a:\n    - { reply: hi, delay_msx: 3 }\n', 's.yaml')).toThrow(
      /^s\.yaml:3:7: /,
    );
    expect(() => parseScript('agents:\n  a:\n    - { when: "(", reply: hi }\n', 's.yaml')).toThrow(
      /^s\.yaml:3:15: agents\.a: invalid when regex/,
    );
    expect(() => parseScript(`x: ${'['.repeat(500)}${']'.repeat(500)}\n`, 's.yaml')).toThrow(
      /^s\.yaml:1:\d+: YAML nested more than 100 levels deep$/,
    );
  });
});
