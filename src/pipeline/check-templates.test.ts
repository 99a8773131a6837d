import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

const lines = (yaml: string) => validateYaml(yaml).lines;

describe('templates', () => {
  it('a syntax error is an error, at the template', () => {
    const [line] = lines('agents:\n  - id: a\n    runtime: scripted\n    system_prompt: "{{ input "\n');
    expect(line).toMatch(/^agents\.yaml:4:20 error: template syntax error in the system_prompt of `a`: /);
  });

  it('what would fail at run time is an error at validate time: unknown filters and tests, refused keys', () => {
    const result = validateYaml(
      'agents:\n  - id: a\n    runtime: scripted\n    system_prompt: "{{ input | nosuchfilter }}{{ input | uper }}"\n    handoffs:\n      - to: b\n        payload: "{% if output is nosuchtest %}x{% endif %}"\n  - id: b\n    runtime: scripted\n    gate: { type: llm, prompt: "{{ output.constructor }}{{ input[\'__proto__\'] }}" }\n',
    );
    expect(result.lines).toEqual([
      'agents.yaml:4:20 error: template error in the system_prompt of `a`: line 1, column 12: unknown filter `nosuchfilter`',
      'agents.yaml:4:20 error: template error in the system_prompt of `a`: line 1, column 38: unknown filter `uper`',
      'agents.yaml:7:18 error: template error in a handoff payload of `a`: line 1, column 17: unknown test `nosuchtest`',
      'agents.yaml:10:32 error: template error in the gate prompt of `b`: line 1, column 11: access to `constructor` is refused by the sandbox',
      'agents.yaml:10:32 error: template error in the gate prompt of `b`: line 1, column 34: access to `__proto__` is refused by the sandbox',
    ]);
    expect(result.diagnostics[1]?.hint).toBe('did you mean `upper`?');
  });

  it('a refused key in a simple `{{ a.b }}` tag too, and known filters and tests pass', () => {
    expect(
      lines('agents:\n  - id: a\n    runtime: scripted\n    system_prompt: "{{ input.constructor }}"\n'),
    ).toEqual([
      'agents.yaml:4:20 error: template error in the system_prompt of `a`: line 1, column 10: access to `constructor` is refused by the sandbox',
    ]);
    expect(
      lines(
        'agents:\n  - id: a\n    runtime: scripted\n    system_prompt: "{{ input | upper | truncate(5) }}{% if input is string %}{{ input.length }}{% endif %}"\n',
      ),
    ).toEqual([]);
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
