import { afterEach, describe, expect, it } from 'vitest';
import type { AgentNode } from '../core/pipeline.js';
import { removeTempDirs, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

const FAMILY = `entry_point: auto
agents:
  - id: grandparent
    abstract: true
    runtime: scripted
    model: big
    context_strategy: none
    gate: { type: llm, prompt: "strict", max_retries: 5 }
    cli_flags: [--a]
  - id: parent
    abstract: true
    extends: grandparent
    name: Parent
    model: medium
    gate: { type: human }
  - id: child
    extends: parent
    system_prompt: "Review: {{ input }}"
  - id: sibling
    extends: grandparent
    abstract: false
    gate: null
`;

describe('extends', () => {
  const result = validateYaml(FAMILY);
  const byId = (id: string) => result.pipeline?.agents.find((a) => a.id === id) as AgentNode;

  it('drops abstract agents, which need no runtime of their own', () => {
    expect(result.lines).toEqual([]);
    expect(result.pipeline?.agents.map((a) => a.id)).toEqual(['child', 'sibling']);
  });

  it('inherits from every level, the nearest ancestor winning (aqm lost the grandparent)', () => {
    expect(byId('child')).toMatchObject({
      runtime: 'scripted',
      model: 'medium',
      context_strategy: 'none',
      cli_flags: ['--a'],
      system_prompt: 'Review: {{ input }}',
    });
  });

  it('merges shallowly: a child mapping replaces the parent one whole', () => {
    expect(byId('child').gate).toEqual({
      type: 'human',
      prompt: '',
      model: null,
      max_retries: 3,
      command: null,
      timeout: null,
      runtime: null,
      verifier: null,
    });
    expect(byId('sibling').gate).toBeNull();
  });

  it('does not inherit id, name or abstract', () => {
    expect(byId('child').name).toBe('Child');
  });

  it('counts in the summary', () => {
    expect(result.features).toContain('2 agents using extends');
  });

  it('an unknown parent, at the extends value, with a suggestion', () => {
    const { lines, diagnostics } = validateYaml(
      'agents:\n  - id: base\n    abstract: true\n    runtime: scripted\n  - id: a\n    extends: bsae\n',
    );
    expect(lines).toEqual(['agents.yaml:6:14 error: agent `a` extends unknown agent `bsae`']);
    expect(diagnostics[0]?.hint).toBe('did you mean `base`?');
  });

  it('a cycle, reported once', () => {
    const { lines } = validateYaml(
      'agents:\n  - id: a\n    extends: b\n    runtime: scripted\n  - id: b\n    extends: a\n  - id: c\n    runtime: scripted\n    handoffs: [{ to: a }]\n',
    );
    expect(lines).toEqual(['agents.yaml:3:14 error: extends cycle: a → b → a']);
  });

  it('an agent extending itself', () => {
    const { lines } = validateYaml('agents:\n  - id: a\n    extends: a\n    runtime: scripted\n');
    expect(lines).toEqual(['agents.yaml:3:14 error: extends cycle: a → a']);
  });

  it('a child without a runtime anywhere in its line', () => {
    const { lines, diagnostics } = validateYaml(
      'agents:\n  - id: base\n    abstract: true\n  - id: a\n    extends: base\n',
    );
    expect(lines).toEqual(['agents.yaml:4:5 error: agent `a` has no runtime']);
    expect(diagnostics[0]?.hint).toContain('(here or in `base`)');
  });

  it('problems in inherited fields point into the parent', () => {
    const { lines } = validateYaml(
      'agents:\n  - id: base\n    abstract: true\n    runtime: scripted\n    handoffs: [{ to: nobody }]\n  - id: a\n    extends: base\n  - id: b\n    extends: base\n',
    );
    // reported once, although two agents inherit it
    expect(lines).toEqual(['agents.yaml:5:22 error: handoff target `nobody` does not exist']);
  });
});
