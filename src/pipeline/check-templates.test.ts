import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

const lines = (yaml: string) => validateYaml(yaml).lines;

describe('templates', () => {
  it('a syntax error is an error, at the template', () => {
    const [line] = lines('agents:\n  - id: a\n    runtime: scripted\n    system_prompt: "{{ input "\n');
    expect(line).toMatch(/^agents\.yaml:4:20 error: template syntax error in the system_prompt of `a`: /);
  });

  it('every variable a system_prompt is given is accepted, loop variables too', () => {
    expect(
      lines(
        'agents:\n  - id: a\n    runtime: scripted\n    system_prompt: "{{ input }}{{ context }}{{ output }}{{ reject_reason }}{{ gate_result }}{{ params.x }}{{ chunks }}{% for b in branches %}{{ b.output }}{{ loop.index }}{% endfor %}"\n',
      ),
    ).toEqual([]);
  });

  it('an unknown variable is a warning with a suggestion', () => {
    const result = validateYaml(
      'agents:\n  - id: a\n    runtime: scripted\n    system_prompt: "{{ inptu }}"\n',
    );
    expect(result.lines).toEqual([
      'agents.yaml:4:20 warning: `inptu` is not a variable of the system_prompt of `a` (it renders empty)',
    ]);
    expect(result.diagnostics[0]?.hint).toBe('did you mean `input`?');
    expect(result.pipeline).toBeDefined();
  });

  it('transcript only for sessions and their participants', () => {
    const prompt = 'system_prompt: "{{ transcript }}"';
    expect(lines(`agents:\n  - id: a\n    runtime: scripted\n    ${prompt}\n`)).toEqual([
      'agents.yaml:4:20 warning: `transcript` is not a variable of the system_prompt of `a` (it renders empty)',
    ]);
    expect(
      lines(
        `agents:\n  - id: s\n    type: session\n    participants: [a]\n    ${prompt}\n  - id: a\n    runtime: scripted\n    ${prompt}\n`,
      ),
    ).toEqual([]);
  });

  it('a handoff payload has no context', () => {
    expect(
      lines(
        'agents:\n  - id: a\n    runtime: scripted\n    handoffs:\n      - to: b\n        payload: "{{ output }} {{ context }}"\n  - id: b\n    runtime: scripted\n',
      ),
    ).toEqual([
      'agents.yaml:6:18 warning: `context` is not a variable of a handoff payload of `a` (it renders empty)',
    ]);
  });

  it('a gate prompt has output, input and params only', () => {
    expect(
      lines(
        'agents:\n  - id: a\n    runtime: scripted\n    gate:\n      prompt: "{{ output }} {{ input }} {{ params }} {{ reject_reason }}"\n',
      ),
    ).toEqual([
      'agents.yaml:5:15 warning: `reject_reason` is not a variable of the gate prompt of `a` (it renders empty)',
    ]);
  });
});

describe('{{ spec }}', () => {
  it('is a variable of prompts and gate prompts', () => {
    const result = validateYaml(`agents:
  - id: a
    runtime: scripted
    system_prompt: "Build to this spec: {{ spec }}"
    gate: {type: llm, prompt: "Does it meet {{ spec.requirements }}?"}
`);
    expect(result.lines).toEqual([]);
  });
});
