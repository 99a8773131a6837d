import { afterEach, describe, expect, it } from 'vitest';
import type { AgentNode } from '../core/pipeline.js';
import { removeTempDirs, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

const SHARED = `agents:
  - id: base_reviewer
    abstract: true
    runtime: scripted
    gate: { type: llm }
  - id: security_reviewer
    extends: base_reviewer
    system_prompt: "Security: {{ input }}"
  - id: style_reviewer
    runtime: scripted
`;

const ids = (result: ReturnType<typeof validateYaml>) => result.pipeline?.agents.map((a) => a.id);

describe('imports', () => {
  it('imports every agent of a full pipeline file, placed before the own agents', () => {
    const result = validateYaml(
      'imports:\n  - from: ./shared/reviewers.yaml\nagents:\n  - id: dev\n    runtime: scripted\n    handoffs: [{ to: security_reviewer }, { to: style_reviewer }]\n',
      { files: { 'shared/reviewers.yaml': SHARED } },
    );
    expect(ids(result)).toEqual(['security_reviewer', 'style_reviewer', 'dev']);
    expect(result.features).toContain('2 imported agents');
    // prepending moves the entry agent, as in aqm; validate says so
    expect(result.lines).toEqual([
      'agents.yaml:4:5 warning: agent `dev` is unreachable from the entry agent `security_reviewer`',
      'reviewers.yaml:9:5 warning: agent `style_reviewer` is unreachable from the entry agent `security_reviewer`',
    ]);
  });

  it('`agents: []` imports all', () => {
    const result = validateYaml(
      'imports:\n  - { from: shared.yaml, agents: [] }\nagents:\n  - id: dev\n    runtime: scripted\n',
      { files: { 'shared.yaml': SHARED } },
    );
    expect(ids(result)).toEqual(['security_reviewer', 'style_reviewer', 'dev']);
  });

  it('imports a subset, bringing (hidden) the ancestors it extends', () => {
    const result = validateYaml(
      'entry_point: auto\nimports:\n  - from: shared.yaml\n    agents: [security_reviewer]\nagents:\n  - id: dev\n    runtime: scripted\n    handoffs: [{ to: security_reviewer }]\n',
      { files: { 'shared.yaml': SHARED } },
    );
    expect(result.lines).toEqual([]);
    expect(ids(result)).toEqual(['security_reviewer', 'dev']);
    expect((result.pipeline!.agents[0] as AgentNode).gate?.type).toBe('llm');
  });

  it('reads a bare list of agents', () => {
    const result = validateYaml(
      'imports:\n  - from: list.yaml\nagents:\n  - id: dev\n    runtime: scripted\n    handoffs: [{ to: helper }]\n',
      { files: { 'list.yaml': '- id: helper\n  runtime: scripted\n' } },
    );
    expect(ids(result)).toEqual(['helper', 'dev']);
  });

  it('resolves `from` relative to the importing file, through nested imports', () => {
    const result = validateYaml(
      'imports:\n  - from: lib/team.yaml\nagents:\n  - id: dev\n    runtime: scripted\n    handoffs: [{ to: lead, condition: "review == yes" }]\n',
      {
        files: {
          'lib/team.yaml':
            'imports:\n  - from: ../common/base.yaml\nagents:\n  - id: lead\n    extends: base\n',
          'common/base.yaml':
            '- id: base\n  abstract: true\n  runtime: scripted\n  handoffs: [{ to: dev }]\n',
        },
      },
    );
    expect(result.lines).toEqual([]);
    expect(ids(result)).toEqual(['lead', 'dev']);
    expect(result.pipeline?.agents[0]?.handoffs[0]?.to).toEqual(['dev']);
  });

  it("substitutes the importing pipeline's params into imported agents", () => {
    const result = validateYaml(
      'params:\n  model: opus\nimports:\n  - from: shared.yaml\nagents:\n  - id: dev\n    runtime: scripted\n',
      { files: { 'shared.yaml': `- id: helper\n  runtime: scripted\n  model: \${{ params.model }}\n` } },
    );
    expect((result.pipeline!.agents[0] as AgentNode).model).toBe('opus');
  });

  it('an unknown param in an imported file is reported in that file', () => {
    const result = validateYaml(
      'imports:\n  - from: shared.yaml\nagents:\n  - id: dev\n    runtime: scripted\n',
      {
        files: { 'shared.yaml': `- id: helper\n  runtime: scripted\n  model: \${{ params.model }}\n` },
      },
    );
    expect(result.lines).toEqual(['shared.yaml:3:10 error: unknown param `model`']);
  });

  it('warns that the params of an imported file are not used', () => {
    const result = validateYaml(
      'imports:\n  - from: shared.yaml\nagents:\n  - id: dev\n    runtime: scripted\n',
      {
        files: { 'shared.yaml': 'params:\n  x: 1\nagents:\n  - id: helper\n    runtime: scripted\n' },
      },
    );
    expect(result.lines).toContain('shared.yaml:1:1 warning: the params of an imported file are not used');
  });

  it('errors: a missing file, an unknown agent in the subset, a schema error in the imported file', () => {
    const result = validateYaml(
      'imports:\n  - from: nope.yaml\n  - from: shared.yaml\n    agents: [security_reviewr]\n  - from: bad.yaml\nagents:\n  - id: dev\n    runtime: scripted\n',
      { files: { 'shared.yaml': SHARED, 'bad.yaml': '- id: x\n  runtime: scripted\n  colour: red\n' } },
    );
    expect(result.lines).toEqual([
      `agents.yaml:2:11 error: cannot import "nope.yaml": no such file (${result.dir}/nope.yaml)`,
      'agents.yaml:4:14 error: "shared.yaml" has no agent "security_reviewr"',
      'bad.yaml:3:3 error: unknown field `colour` in `[0]`',
    ]);
    expect(result.diagnostics[1]?.hint).toBe('did you mean `security_reviewer`?');
  });

  it('an import cycle', () => {
    const result = validateYaml('imports:\n  - from: a.yaml\nagents:\n  - id: dev\n    runtime: scripted\n', {
      files: { 'a.yaml': 'imports:\n  - from: agents.yaml\nagents:\n  - id: a\n    runtime: scripted\n' },
    });
    expect(result.lines).toEqual(['a.yaml:2:11 error: import cycle: agents.yaml → a.yaml → agents.yaml']);
  });

  it('an agent defined both here and in an import is a duplicate', () => {
    const result = validateYaml(
      'imports:\n  - from: list.yaml\nagents:\n  - id: helper\n    runtime: scripted\n',
      {
        files: { 'list.yaml': '- id: helper\n  runtime: scripted\n' },
      },
    );
    expect(result.lines).toEqual(['agents.yaml:4:9 error: duplicate agent id `helper`']);
    expect(result.diagnostics[0]?.hint).toBe('first defined at list.yaml:1:7');
  });
});
