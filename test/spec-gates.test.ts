import { describe, expect, it } from 'vitest';
import { eventLog, project, type TaskJson, troupe, troupeJson } from './support/troupe.js';

/** Spec gates, output_schema and qa: strict, through the built binary on the scripted runtime. */

type SpecTaskJson = Omit<TaskJson, 'stages'> & {
  size: { size: string; by: string } | null;
  spec: { stage: number; agent: string; spec: { requirements: string[] } } | null;
  stages: Array<
    Omit<TaskJson['stages'][number], 'gate'> & {
      gate: { decision: string; reason: string; by: string } | null;
    }
  >;
};

const validSpec =
  '{"requirements": ["GET /health returns 200"], "files": ["src/health.ts"], "verification": ["npm test"]}';

const pipeline = `agents:
  - id: triage
    runtime: claude
    handoffs: [{to: planner}]
  - id: planner
    runtime: claude
    spec: required
    handoffs: [{to: dev}]
  - id: dev
    runtime: claude
    system_prompt: |
      Implement this spec:
      {{ spec }}
`;

/**
 * The planner answers with a valid spec only when its prompt carries the validation errors of
 * its first answer; dev succeeds only when its prompt carries the spec.
 */
const script = (triage: string) => `agents:
  triage:
    - ${JSON.stringify(triage)}
  planner:
    - when: "Gate Rejection[\\\\s\\\\S]*requirements must NOT have fewer than 1 items"
      reply: ${JSON.stringify(`here is the spec\n${validSpec}`)}
    - '{"requirements": [], "files": ["src/health.ts"], "verification": []}'
  dev:
    - when: "Implement this spec:\\\\s+\\\\{[\\\\s\\\\S]*\\"GET /health returns 200\\""
      reply: "implemented"
    - error: crash
`;

function specProject(triage = 'triaged') {
  return project({ 'agents.yaml': pipeline, 'script.yaml': script(triage) });
}

const run = (dir: string, ...extra: string[]) =>
  troupeJson<SpecTaskJson>(dir, [
    'run',
    'add /health',
    '--file',
    'agents.yaml',
    '--script',
    'script.yaml',
    ...extra,
  ]);

describe('spec gates', () => {
  it('size M: an invalid spec goes back with its errors, the valid one is recorded and reaches {{ spec }}', async () => {
    const dir = specProject();
    const { code, json } = await run(dir, '--size', 'M');
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    expect(json.stages.map((s) => s.agent)).toEqual(['triage', 'planner', 'planner', 'dev']);
    expect(json.stages[1]!.gate).toMatchObject({ decision: 'rejected', by: 'spec' });
    expect(json.stages[1]!.gate!.reason).toContain('requirements must NOT have fewer than 1 items');
    // the errors reached the planner's second prompt (its input)
    expect(json.stages[2]!.input).toContain('--- Gate Rejection ---');
    expect(json.stages[2]!.input).toContain('requirements must NOT have fewer than 1 items');
    expect(json.stages[3]!.output).toBe('implemented');

    const status = await troupeJson<SpecTaskJson>(dir, ['status', json.id]);
    expect(status.json.size).toEqual({ size: 'M', by: 'cli' });
    expect(status.json.spec).toEqual({ stage: 3, agent: 'planner', spec: JSON.parse(validSpec) });
    const text = await troupe(dir, ['status', json.id]);
    expect(text.stdout).toContain('size: M (set by cli)');
    expect(text.stdout).toContain('requirement: GET /health returns 200');
    expect(text.stdout).toContain('verify: npm test');
    const types = eventLog(dir, json.id).map((e) => e.type);
    expect(types).toContain('task_sized');
    expect(types.filter((t) => t === 'output_rejected')).toHaveLength(1);
    expect(types.filter((t) => t === 'spec_recorded')).toHaveLength(1);
  });

  it('size S (or none) needs no spec: the invalid one passes and nothing is recorded', async () => {
    for (const size of [['--size', 'S'], []]) {
      const dir = specProject();
      const { code, json } = await run(dir, ...size);
      expect(json.stages.map((s) => s.agent)).toEqual(['triage', 'planner', 'dev']);
      expect(json.stages[1]!.gate).toBeNull();
      expect(json.spec).toBeNull();
      // no spec: dev's prompt has none, and its script fails it — the check did not run
      expect(code).toBe(1);
    }
  });

  it('an agent’s SIZE: line sets the size, and the spec is then required', async () => {
    const dir = specProject('looks big\nSIZE: XL');
    const { code, json } = await run(dir);
    expect(code).toBe(0);
    expect(json.size).toEqual({ size: 'XL', by: 'triage' });
    expect(json.stages.map((s) => s.agent)).toEqual(['triage', 'planner', 'planner', 'dev']);
  });

  it('too many invalid specs fail the task with the reason', async () => {
    const dir = project({
      'agents.yaml':
        'agents:\n  - id: planner\n    runtime: claude\n    spec: required\n    gate: {type: command, command: "true", max_retries: 1}\n',
      'script.yaml': 'agents:\n  planner:\n    - "no spec, 1"\n    - "no spec, 2"\n',
    });
    const { code, json } = await run(dir, '--size', 'L');
    expect(code).toBe(1);
    expect(json.status).toBe('failed');
    expect(json.stages).toHaveLength(2);
    expect(json.error).toContain(
      "Agent 'planner' exceeded max gate retries (1). Its spec kept failing validation",
    );
    expect(json.error).toContain('no spec (JSON object) found in the output');
  });

  it('refuses a size that is not S, M, L or XL', async () => {
    const result = await troupe(specProject(), ['run', 'x', '--file', 'agents.yaml', '--size', 'XXL']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--size is one of S, M, L, XL');
  });
});

describe('output_schema', () => {
  const schemaPipeline = `agents:
  - id: review
    runtime: claude
    output_schema: schemas/review.yaml
    handoffs: [{to: score}]
  - id: score
    runtime: claude
    output_schema:
      type: object
      required: [score]
      properties: {score: {type: integer, minimum: 0, maximum: 10}}
`;
  const schemaFile = 'type: object\nrequired: [verdict]\nproperties:\n  verdict: {enum: [ship, hold]}\n';

  it('checks the output against an inline schema and one from a file, sending failures back', async () => {
    const dir = project({
      'agents.yaml': schemaPipeline,
      'schemas/review.yaml': schemaFile,
      'script.yaml': `agents:
  review:
    - 'looks fine {"verdict": "maybe"}'
    - when: "verdict must be equal to one of the allowed values"
      reply: '{"verdict": "ship"}'
  score:
    - '{"score": 11}'
    - '{"score": 9}'
`,
    });
    const { code, json } = await run(dir);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    expect(json.stages.map((s) => [s.agent, s.gate?.by ?? null])).toEqual([
      ['review', 'output_schema'],
      ['review', null],
      ['score', 'output_schema'],
      ['score', null],
    ]);
    expect(json.stages[2]!.gate!.reason).toContain('score must be <= 10');
  });

  it('validate reports a schema that is not one and a missing file at file:line:col', async () => {
    const dir = project({
      'agents.yaml': `agents:
  - id: review
    runtime: claude
    output_schema: schemas/missing.json
    handoffs: [{to: score}]
  - id: score
    runtime: claude
    output_schema: {type: objekt}
`,
    });
    const result = await troupe(dir, ['validate', 'agents.yaml']);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(
      /agents\.yaml:4:20: error: output_schema file `schemas\/missing\.json` does not exist/,
    );
    expect(result.stdout).toMatch(
      /agents\.yaml:8:20: error: output_schema of `score` is not a valid JSON Schema/,
    );
  });
});

describe('qa: strict', () => {
  const sameModel = `agents:
  - id: dev
    runtime: claude
    gate: {type: llm, verifier: qa}
  - id: qa
    runtime: claude
`;

  it('validate refuses a verifier on the worker’s runtime and model only under qa: strict', async () => {
    const relaxed = await troupe(project({ 'agents.yaml': sameModel }), ['validate', 'agents.yaml']);
    expect(relaxed.stdout).not.toContain('cross-LLM');
    const strict = project({ 'agents.yaml': sameModel, '.troupe/config.yaml': 'qa: strict\n' });
    const result = await troupe(strict, ['validate', 'agents.yaml']);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(
      'agents.yaml:4:33: error: verifier `qa` runs on the same runtime and model as `dev` (claude, default model); qa: strict needs cross-LLM verification',
    );
    const crossed = project({
      'agents.yaml': sameModel.replace(/runtime: claude\n$/, 'runtime: gemini\n'),
      '.troupe/config.yaml': 'qa: strict\n',
    });
    expect((await troupe(crossed, ['validate', 'agents.yaml'])).code).toBe(0);
  });
});
