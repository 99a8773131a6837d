import { describe, expect, it } from 'vitest';
import { agent, Log, pipeline } from '../test-pipelines.js';
import { outputCheckEvents } from './output-check.js';

const specAgent = agent('planner', { spec: 'required' });
const validSpec = JSON.stringify({
  requirements: ['GET /health returns 200'],
  files: ['src/health.ts'],
  verification: ['npm test'],
});

function sized(size: 'S' | 'M' | null) {
  const log = new Log(pipeline(specAgent));
  if (size) log.add({ type: 'task_sized', size, by: 'cli' });
  return log.state;
}

describe('output checks: SIZE', () => {
  it('records a SIZE: line once, as set by the agent', () => {
    const state = sized(null);
    expect(outputCheckEvents(state, agent('a'), 1, 'plan\nSIZE: l\n', false)).toEqual([
      { type: 'task_sized', size: 'L', by: 'a' },
    ]);
    expect(outputCheckEvents(sized('M'), agent('a'), 1, '**SIZE:** M', false)).toEqual([]);
  });
});

describe('output checks: spec: required', () => {
  it('records a valid spec, whatever the size', () => {
    for (const size of ['M', 'S', null] as const) {
      expect(outputCheckEvents(sized(size), specAgent, 2, `here:\n${validSpec}`, false)).toEqual([
        { type: 'spec_recorded', stage: 2, agent: 'planner', spec: JSON.parse(validSpec) },
      ]);
    }
  });

  it('sends back an invalid or missing spec from size M, with the errors', () => {
    const invalid = outputCheckEvents(sized('M'), specAgent, 1, '{"requirements": [], "files": []}', false);
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({ type: 'output_rejected', check: 'spec', stage: 1, agent: 'planner' });
    const reason = (invalid[0] as { reason: string }).reason;
    expect(reason).toContain('requirements must NOT have fewer than 1 items');
    expect(reason).toContain("must have required property 'verification'");
    expect(reason).toContain('A task of size M needs a spec');
    const missing = outputCheckEvents(sized('M'), specAgent, 1, 'I will just start coding', false);
    expect(missing[0]).toMatchObject({ type: 'output_rejected', check: 'spec' });
    expect((missing[0] as { reason: string }).reason).toContain('no spec (JSON object) found');
  });

  it('does not require one for size S or an unsized task', () => {
    expect(outputCheckEvents(sized('S'), specAgent, 1, 'just do it', false)).toEqual([]);
    expect(outputCheckEvents(sized(null), specAgent, 1, '{"requirements": []}', false)).toEqual([]);
  });

  it('reads the size the same output sets', () => {
    const events = outputCheckEvents(sized('S'), specAgent, 1, 'SIZE: XL\nno spec', false);
    expect(events.map((e) => e.type)).toEqual(['task_sized', 'output_rejected']);
  });

  it('checks nothing on a session turn', () => {
    expect(outputCheckEvents(sized('M'), specAgent, 1, 'no spec', true)).toEqual([]);
  });
});

describe('output checks: output_schema', () => {
  const schema = {
    type: 'object',
    required: ['verdict'],
    properties: { verdict: { enum: ['ship', 'hold'] } },
  };
  const reviewer = agent('review', { output_schema: schema });

  it('passes output whose last JSON object matches', () => {
    expect(
      outputCheckEvents(sized(null), reviewer, 3, 'ok\n```json\n{"verdict": "ship"}\n```', false),
    ).toEqual([]);
  });

  it('sends back output that does not match, or has no JSON object', () => {
    const [wrong] = outputCheckEvents(sized(null), reviewer, 3, '{"verdict": "maybe"}', false);
    expect(wrong).toMatchObject({ type: 'output_rejected', check: 'output_schema' });
    expect((wrong as { reason: string }).reason).toContain(
      'verdict must be equal to one of the allowed values',
    );
    const [none] = outputCheckEvents(sized(null), reviewer, 3, 'ship it', false);
    expect((none as { reason: string }).reason).toContain('no JSON object found in the output');
  });
});
