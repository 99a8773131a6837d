import { chmodSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

const warnings = (yaml: string) => validateYaml(yaml).lines;
const loops = (yaml: string) => warnings(yaml).filter((line) => line.includes('gate reject loop'));

describe('unreachable agents', () => {
  it('warns about an agent nothing leads to from the first agent', () => {
    expect(
      warnings(
        'agents:\n  - id: a\n    runtime: scripted\n    handoffs: [{ to: b }]\n  - id: b\n    runtime: scripted\n  - id: c\n    runtime: scripted\n',
      ),
    ).toEqual(['agents.yaml:7:5 warning: agent `c` is unreachable from the entry agent `a`']);
  });

  it('session participants and summary agents are reachable through their session', () => {
    expect(
      warnings(
        'agents:\n  - id: s\n    type: session\n    participants: [a, b]\n    summary_agent: b\n  - id: a\n    runtime: scripted\n  - id: b\n    runtime: scripted\n',
      ),
    ).toEqual([]);
  });

  it('`*` reaches everyone, and with entry_point auto anyone can start', () => {
    expect(
      warnings(
        'agents:\n  - id: a\n    runtime: scripted\n    handoffs: [{ to: "*", condition: auto }]\n  - id: b\n    runtime: scripted\n',
      ),
    ).toEqual([]);
    expect(
      warnings(
        'entry_point: auto\nagents:\n  - id: a\n    runtime: scripted\n  - id: b\n    runtime: scripted\n',
      ),
    ).toEqual([]);
  });
});

describe('gate reject loops', () => {
  const team = (reviewerHandoffs: string, developerHandoffs = '[{ to: reviewer }]') =>
    `agents:\n  - id: developer\n    runtime: scripted\n    handoffs: ${developerHandoffs}\n  - id: reviewer\n    runtime: scripted\n    gate: { type: llm }\n    handoffs: ${reviewerHandoffs}\n  - id: deployer\n    runtime: scripted\n`;

  it('the usual loop has an exit: approval goes on to the deployer', () => {
    expect(
      warnings(team('[{ to: deployer, condition: on_approve }, { to: developer, condition: on_reject }]')),
    ).toEqual([]);
  });

  it('approval that finishes the task is an exit too', () => {
    expect(loops(team('[{ to: developer, condition: on_reject }]'))).toEqual([]);
  });

  it('warns when approval leads back into the loop as well', () => {
    const result = team(
      '[{ to: developer, condition: on_approve }, { to: developer, condition: on_reject }, { to: deployer, condition: on_reject }]',
    );
    expect(loops(result)).toEqual([]); // on_reject also reaches the deployer, which ends the task
    const looping = validateYaml(
      team('[{ to: developer, condition: on_approve }, { to: developer, condition: on_reject }]'),
    );
    expect(looping.lines).toContain(
      'agents.yaml:8:64 warning: gate reject loop has no exit: after `reviewer` rejects, the task can only go round reviewer → developer → reviewer',
    );
    expect(looping.diagnostics.find((d) => d.message.startsWith('gate reject'))?.hint).toMatch(/on_approve/);
  });

  it('warns for a self-retry (no on_reject) whose approval can never finish', () => {
    const result = validateYaml(team('[{ to: developer }]'));
    expect(result.lines).toContain(
      'agents.yaml:7:11 warning: gate reject loop has no exit: after `reviewer` rejects, the task can only go round reviewer → reviewer',
    );
  });
});

describe('runtime CLIs', () => {
  const yaml =
    'agents:\n  - id: a\n    runtime: claude\n    handoffs: [{ to: b }]\n  - id: b\n    runtime: openai\n';

  it('warns when the CLI is not on PATH, at the runtime', () => {
    const result = validateYaml(yaml);
    expect(result.lines).toEqual(['agents.yaml:3:14 warning: `claude` is not on PATH (runtime of `a`)']);
    expect(result.diagnostics[0]?.hint).toContain('npm i -g @anthropic-ai/claude-code');
  });

  it('is quiet when an executable of that name is on PATH', () => {
    const bin = tempDir({ claude: '#!/bin/sh\n' });
    chmodSync(path.join(bin, 'claude'), 0o755);
    expect(validateYaml(yaml, { pathEnv: bin }).lines).toEqual([]);
  });

  it('a file that is not executable does not count', () => {
    const bin = tempDir({ claude: '#!/bin/sh\n' });
    expect(validateYaml(yaml, { pathEnv: bin }).lines).toHaveLength(1);
  });
});

describe('fields that do nothing where they are', () => {
  it('session fields on an agent, agent fields on a session', () => {
    expect(
      warnings(
        'agents:\n  - id: s\n    type: session\n    participants: [a]\n    runtime: claude\n  - id: a\n    runtime: scripted\n    max_rounds: 3\n    chunks: { initial: [x] }\n',
      ),
    ).toEqual([
      'agents.yaml:5:14 warning: `runtime` is ignored on a session (`s`)',
      'agents.yaml:8:17 warning: `max_rounds` is ignored on an agent (`a`)',
    ]);
  });

  it('the deprecated claude_code_flags', () => {
    expect(warnings('agents:\n  - id: a\n    runtime: scripted\n    claude_code_flags: [-v]\n')).toEqual([
      'agents.yaml:4:24 warning: `claude_code_flags` is deprecated',
    ]);
    expect(
      warnings(
        'agents:\n  - id: a\n    runtime: scripted\n    claude_code_flags: [-v]\n    cli_flags: [-q]\n',
      ),
    ).toEqual(['agents.yaml:4:24 warning: `claude_code_flags` is ignored: `cli_flags` is set']);
  });

  it('a command on a gate that is not a command gate', () => {
    expect(
      warnings('agents:\n  - id: a\n    runtime: scripted\n    gate: { type: llm, command: make }\n'),
    ).toEqual(['agents.yaml:4:33 warning: `command` is ignored on a gate of type llm']);
  });
});

describe('handoff loops with no exit', () => {
  const endless = (yaml: string) => warnings(yaml).filter((line) => line.includes('handoff loop'));
  const agent = (id: string, handoffs: string, extra = '') =>
    `  - id: ${id}\n    runtime: scripted\n${extra}    handoffs: ${handoffs}\n`;

  it('warns for an `always` self-loop, at its handoff', () => {
    const result = validateYaml(`agents:\n${agent('a', '[{ to: a }]')}`);
    expect(result.lines).toEqual([
      'agents.yaml:4:22 warning: handoff loop has no exit: `a` → `a` hand on whatever the output, so the task never ends',
    ]);
    expect(result.diagnostics[0]?.hint).toMatch(/conditional/);
  });

  it('warns once for a two-agent cycle with `always` handoffs and no way out', () => {
    expect(
      endless(
        `agents:\n${agent('a', '[{ to: b, condition: always }]')}${agent('b', '[{ to: a, condition: on_pass }]')}`,
      ),
    ).toEqual([
      'agents.yaml:4:22 warning: handoff loop has no exit: `a` → `b` → `a` hand on whatever the output, so the task never ends',
    ]);
  });

  it('a handoff out of the loop does not stop it: every handoff that holds fires', () => {
    const result = validateYaml(
      `agents:\n${agent('a', '[{ to: b }]')}${agent('b', '[{ to: a }, { to: c, condition: "status == done" }]')}  - id: c\n    runtime: scripted\n`,
    );
    expect(result.lines.filter((l) => l.includes('handoff loop'))).toHaveLength(1);
    expect(result.diagnostics[0]?.hint).toMatch(/beside it/);
  });

  it('is quiet when a handoff of the loop is conditional', () => {
    expect(
      endless(
        `agents:\n${agent('a', '[{ to: b }]')}${agent('b', '[{ to: a, condition: "status != done" }, { to: c, condition: "status == done" }]')}  - id: c\n    runtime: scripted\n`,
      ),
    ).toEqual([]);
    expect(endless(`agents:\n${agent('a', '[{ to: a, condition: auto }]')}`)).toEqual([]);
  });

  it('is quiet when an agent of the loop has a gate, and for sessions', () => {
    expect(
      endless(
        `agents:\n${agent('a', '[{ to: b }]')}${agent('b', '[{ to: a }]', '    gate: { type: llm }\n')}`,
      ),
    ).toEqual([]);
    expect(
      endless(
        'agents:\n  - id: s\n    type: session\n    participants: [p]\n    handoffs: [{ to: s }]\n  - id: p\n    runtime: scripted\n',
      ),
    ).toEqual([]);
  });
});
