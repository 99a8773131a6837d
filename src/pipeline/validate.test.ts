import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, validateYaml } from './test-files.js';
import { validatePipelineFile } from './validate.js';

afterEach(removeTempDirs);

describe('validatePipelineFile', () => {
  it('a valid pipeline: no diagnostics, the pipeline and what it uses', () => {
    const result = validateYaml(`params:
  model: opus
agents:
  - id: dev
    runtime: scripted
    mcp: [github]
    handoffs: [{ to: review }]
  - id: review
    runtime: scripted
    gate: { type: llm }
    handoffs: [{ to: talk, condition: on_approve }, { to: dev, condition: on_reject }]
  - id: talk
    type: session
    participants: [dev, review]
    handoffs: [{ to: ship }]
  - id: ship
    runtime: scripted
    gate: { type: command, command: "npm test" }
`);
    expect(result.lines).toEqual([]);
    expect(result.pipeline?.agents).toHaveLength(4);
    expect(result.features).toEqual([
      '1 llm gate',
      '1 command gate',
      '1 session',
      '4 handoffs',
      '1 MCP server',
      '1 param',
    ]);
  });

  it('errors: no pipeline, and no warnings (they would mostly repeat the errors)', () => {
    const result = validateYaml(
      'agents:\n  - id: a\n    runtime: scripted\n    handoffs: [{ to: b }]\n  - id: c\n    runtime: claude\n',
    );
    expect(result.pipeline).toBeUndefined();
    expect(result.lines).toEqual(['agents.yaml:4:22 error: handoff target `b` does not exist']);
  });

  it('workspace.remote: a remote name or URL, in a worktree; bad values with file:line:col', () => {
    const agents = 'agents:\n  - id: a\n    runtime: scripted\n';
    const good = validateYaml(`workspace: {remote: git@example.com:team/app.git}\n${agents}`);
    expect(good.lines).toEqual([]);
    expect(good.pipeline?.workspace?.remote).toBe('git@example.com:team/app.git');
    expect(validateYaml(`workspace: {remote: --upload-pack=x}\n${agents}`).lines).toEqual([
      'agents.yaml:1:21 error: `workspace.remote`: a git remote is a remote name (origin) or a URL, without spaces and not starting with -',
    ]);
    expect(validateYaml(`workspace: {isolation: none, remote: origin}\n${agents}`).lines).toEqual([
      'agents.yaml:1:38 error: `workspace.remote`: needs a worktree: remove isolation: none, or remove remote',
    ]);
  });

  it('warnings alone still give the pipeline', () => {
    const result = validateYaml('agents:\n  - id: a\n    runtime: claude\n');
    expect(result.pipeline?.agents).toHaveLength(1);
    expect(result.diagnostics.map((d) => d.severity)).toEqual(['warning']);
  });

  it('a file that cannot be read is a diagnostic, not an exception', () => {
    const result = validatePipelineFile('/nonexistent/agents.yaml');
    expect(result.diagnostics).toEqual([
      {
        severity: 'error',
        file: path.resolve('/nonexistent/agents.yaml'),
        line: 1,
        col: 1,
        message: 'cannot read the pipeline file (ENOENT)',
        hint: 'check the path and its permissions',
      },
    ]);
  });

  it('a YAML syntax error stops there', () => {
    const result = validateYaml('agents:\n  - id: a\n\truntime: claude\n');
    expect(result.lines).toHaveLength(1);
    expect(result.lines[0]).toMatch(/^agents\.yaml:3:1 error: YAML syntax error: /);
  });
});

describe('plan:', () => {
  const planner = (plan: string) => `agents:
  - id: planner
    runtime: scripted
    plan: ${plan}
  - id: builder
    runtime: scripted
  - id: tester
    runtime: scripted
  - id: talk
    type: session
    participants: [builder, tester]
`;

  it('a planner with a worker and a verifier validates, and reaches both', () => {
    expect(validateYaml(planner('{ worker: builder, verifier: tester }')).lines).toEqual([
      'agents.yaml:9:5 warning: agent `talk` is unreachable from the entry agent `planner`',
    ]);
  });

  it('names a worker or verifier that cannot be one, where it is written', () => {
    expect(validateYaml(planner('{ worker: planner }')).lines[0]).toBe(
      "agents.yaml:4:21 error: `planner` cannot be its own plan's worker",
    );
    expect(validateYaml(planner('{ worker: buider }')).lines[0]).toMatch(
      /^agents\.yaml:4:21 error: plan worker `buider` does not exist/,
    );
    expect(validateYaml(planner('{ worker: talk }')).lines[0]).toMatch(/plan worker `talk` is a session/);
    expect(validateYaml(planner('{ worker: builder, verifier: builder }')).lines[0]).toMatch(
      /^agents\.yaml:4:\d+ error: `builder` cannot verify pieces it built/,
    );
    expect(validateYaml(planner('{ worker: builder, concurrency: 0 }')).lines[0]).toMatch(/concurrency/);
  });
});
