import { afterEach, describe, expect, it } from 'vitest';
import { RUNTIME_NAMES } from '../core/runtimes.js';
import { removeTempDirs, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

/** Errors only, as `line:col message`. */
function errors(yaml: string): string[] {
  return validateYaml(yaml)
    .diagnostics.filter((d) => d.severity === 'error')
    .map((d) => `${d.line}:${d.col} ${d.message}`);
}

function hints(yaml: string): (string | undefined)[] {
  return validateYaml(yaml).diagnostics.map((d) => d.hint);
}

describe('references between agents', () => {
  it('a duplicate id, at the second one, pointing at the first', () => {
    const yaml = 'agents:\n  - id: a\n    runtime: scripted\n  - id: a\n    runtime: scripted\n';
    expect(errors(yaml)).toEqual(['4:9 duplicate agent id `a`']);
    expect(hints(yaml)).toEqual(['first defined at agents.yaml:2:9']);
  });

  it('a handoff to an unknown agent, each comma target checked', () => {
    const yaml =
      'agents:\n  - id: dev\n    runtime: scripted\n    handoffs:\n      - to: "qa, docs, reviewr"\n  - id: qa\n    runtime: scripted\n  - id: reviewer\n    runtime: scripted\n';
    expect(errors(yaml)).toEqual([
      '5:13 handoff target `docs` does not exist',
      '5:13 handoff target `reviewr` does not exist',
    ]);
    expect(hints(yaml)).toEqual(['agents: dev, qa, reviewer', 'did you mean `reviewer`?']);
  });

  it('an empty target in a comma list', () => {
    expect(errors('agents:\n  - id: a\n    runtime: scripted\n    handoffs: [{ to: "a,,a" }]\n')).toEqual([
      '4:22 empty handoff target',
    ]);
  });

  it('`*` only with condition auto', () => {
    const base = 'agents:\n  - id: a\n    runtime: scripted\n    handoffs: [{ to: "*"';
    expect(errors(`${base}, condition: auto }]\n`)).toEqual([]);
    expect(errors(`${base} }]\n`)).toEqual(['4:22 `*` is only allowed with `condition: auto`']);
  });

  it('auto with named targets still checks them', () => {
    expect(
      errors('agents:\n  - id: a\n    runtime: scripted\n    handoffs: [{ to: "a, b", condition: auto }]\n'),
    ).toEqual(['4:22 handoff target `b` does not exist']);
  });

  it('a handoff to an abstract agent', () => {
    expect(
      errors(
        'agents:\n  - id: base\n    abstract: true\n  - id: a\n    runtime: scripted\n    handoffs: [{ to: base }]\n',
      ),
    ).toEqual(['6:22 handoff target `base` is abstract']);
  });

  it('a handoff to an agent that is itself broken is not reported again', () => {
    expect(
      errors(
        'agents:\n  - id: a\n    runtime: scripted\n    handoffs: [{ to: b }]\n  - id: b\n    runtime: gpt5\n',
      ),
    ).toEqual([`6:14 \`agents[1].runtime\` must be one of ${RUNTIME_NAMES.join(', ')}, not "gpt5"`]);
  });

  it('a type-agent without runtime', () => {
    expect(errors('agents:\n  - id: a\n    system_prompt: hi\n')).toEqual(['2:5 agent `a` has no runtime']);
  });
});

describe('conditions', () => {
  const agent = (handoff: string, gate = '') =>
    `agents:\n  - id: a\n    runtime: scripted\n${gate}    handoffs: [${handoff}]\n  - id: b\n    runtime: scripted\n`;

  it('on_approve / on_reject need a gate', () => {
    expect(errors(agent('{ to: b, condition: on_approve }'))).toEqual([
      '4:36 `on_approve` never fires: `a` has no gate',
    ]);
    expect(errors(agent('{ to: b, condition: on_reject }'))).toEqual([
      '4:36 `on_reject` never fires: `a` has no gate',
    ]);
    expect(errors(agent('{ to: b, condition: on_reject }', '    gate: { type: human }\n'))).toEqual([]);
  });

  it('on_no_consensus only on sessions', () => {
    expect(errors(agent('{ to: b, condition: on_no_consensus }'))).toEqual([
      '4:36 `on_no_consensus` only applies to sessions',
    ]);
  });

  it('expressions are parsed; a broken one is an error', () => {
    expect(errors(agent('{ to: b, condition: "severity == critical" }'))).toEqual([]);
    expect(errors(agent('{ to: b, condition: "status in [done, skipped]" }'))).toEqual([]);
    const [error] = errors(agent('{ to: b, condition: "severity == " }'));
    expect(error).toMatch(/^4:36 invalid condition `severity == `: /);
  });

  it('a keyword typo is caught rather than read as an expression', () => {
    const yaml = agent('{ to: b, condition: on_aprove }', '    gate: {}\n');
    expect(errors(yaml)).toEqual(['5:36 unknown condition `on_aprove`']);
    expect(hints(yaml)).toEqual(['did you mean `on_approve`?']);
  });

  it('an `on_…` word that is no keyword is a warning: it would be read as a field and never fire', () => {
    const yaml = agent('{ to: b, condition: on_fail }', '    gate: {}\n');
    expect(errors(yaml)).toEqual([]);
    expect(validateYaml(yaml).diagnostics).toEqual([
      expect.objectContaining({
        severity: 'warning',
        line: 5,
        col: 36,
        message:
          "unknown condition `on_fail`: read as the output's field `on_fail`, it fires only when that field is set",
        hint: 'a condition here is one of always, on_approve, on_reject, on_pass, auto, or an expression such as `severity == critical`',
      }),
    ]);
  });
});

describe('sessions', () => {
  const session = (fields: string) =>
    `entry_point: auto\nagents:\n  - id: s\n    type: session\n${fields}  - id: a\n    runtime: scripted\n  - id: t\n    type: session\n    participants: [a]\n  - id: base\n    abstract: true\n`;

  it('a valid session', () => {
    expect(errors(session('    participants: [a]\n    summary_agent: a\n'))).toEqual([]);
  });

  it('no participants', () => {
    expect(errors(session('    max_rounds: 2\n'))).toEqual(['3:5 session `s` has no participants']);
  });

  it('participants that do not exist, are sessions or are abstract', () => {
    expect(errors(session('    participants: [a, nobody, t, base]\n'))).toEqual([
      '5:23 participant `nobody` does not exist',
      '5:31 participant `t` is a session',
      '5:34 participant `base` is abstract',
    ]);
  });

  it('a summary agent that does not exist or is not a participant', () => {
    expect(errors(session('    participants: [a]\n    summary_agent: nobody\n'))).toEqual([
      '6:20 summary agent `nobody` does not exist',
    ]);
    expect(
      errors(
        'entry_point: auto\nagents:\n  - id: s\n    type: session\n    participants: [a]\n    summary_agent: b\n  - id: a\n    runtime: scripted\n  - id: b\n    runtime: scripted\n',
      ),
    ).toEqual(['6:20 summary agent `b` is not a participant of `s`']);
  });

  it('require_chunks_done without chunks', () => {
    expect(
      errors(session('    participants: [a]\n    consensus:\n      require_chunks_done: true\n')),
    ).toEqual(['7:28 `require_chunks_done` needs a `chunks:` block on the session']);
    expect(
      errors(
        session(
          '    participants: [a]\n    consensus: { require_chunks_done: true }\n    chunks: { initial: [x] }\n',
        ),
      ),
    ).toEqual([]);
  });

  it('on_approve on a session', () => {
    expect(
      errors(session('    participants: [a]\n    handoffs: [{ to: a, condition: on_approve }]\n')),
    ).toEqual(['6:36 `on_approve` never fires: sessions have no gate']);
  });
});

it('reports every problem of the file in one pass', () => {
  const yaml = `agents:
  - id: a
    runtime: scripted
    sytem_prompt: x
    handoffs: [{ to: nobody }]
  - id: a
    runtime: scripted
  - id: s
    type: session
    participants: [ghost]
`;
  expect(errors(yaml)).toEqual([
    '4:5 unknown field `sytem_prompt` in `agents[0]`',
    '5:22 handoff target `nobody` does not exist',
    '6:9 duplicate agent id `a`',
    '10:20 participant `ghost` does not exist',
  ]);
});
