import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PipelineError, UsageError } from '../core/errors.js';
import type { AgentNode, ParamDefinition } from '../core/pipeline.js';
import { renderTemplate } from './lang/template.js';
import { loadPipeline } from './load.js';
import { coerceParam, paramDefinitions, substituteParams } from './params.js';
import { removeTempDirs, tempDir, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

const PIPELINE = `params:
  model: sonnet
  rounds:
    type: number
    default: 3
  fast:
    type: boolean
    default: false
agents:
  - id: a
    runtime: scripted
    model: \${{ params.model }}
    system_prompt: "rounds=\${{params.rounds}} fast=\${{   params.fast   }}"
`;

/** The system_prompt as the stage sees it: params are its template variables. */
function prompt(pipeline: { params: Record<string, unknown> }, agent: AgentNode): string {
  return renderTemplate(agent.system_prompt, { params: pipeline.params }, 'test');
}

function load(files: Record<string, string>, file: string, opts: Parameters<typeof loadPipeline>[1] = {}) {
  const dir = tempDir(files);
  const pipeline = loadPipeline(path.join(dir, file), opts);
  return { pipeline, agent: pipeline.agents[0] as AgentNode, dir };
}

describe('param values', () => {
  it('default, then params file, then --param', () => {
    expect(load({ 'agents.yaml': PIPELINE }, 'agents.yaml').pipeline.params).toEqual({
      model: 'sonnet',
      rounds: 3,
      fast: false,
    });
    const files = { 'agents.yaml': PIPELINE, 'params.yaml': 'model: opus\nrounds: 5\n' };
    expect(load(files, 'agents.yaml').pipeline.params).toEqual({ model: 'opus', rounds: 5, fast: false });
    const { pipeline, agent } = load(files, 'agents.yaml', { params: { model: 'haiku', fast: 'yes' } });
    expect(pipeline.params).toEqual({ model: 'haiku', rounds: 5, fast: true });
    expect(agent.model).toBe('haiku');
    expect(agent.system_prompt).toBe('rounds={{ params.rounds }} fast={{ params.fast }}');
    expect(prompt(pipeline, agent)).toBe('rounds=5 fast=true');
  });

  it('records the definitions, the bare shorthand typed by its value', () => {
    const { pipeline } = load({ 'agents.yaml': PIPELINE }, 'agents.yaml');
    expect(pipeline.paramDefinitions.model).toEqual({
      type: 'string',
      default: 'sonnet',
      required: false,
      description: '',
      prompt: null,
      auto_detect: null,
    });
    expect(paramDefinitions({ n: 2, b: true, s: null })).toMatchObject({
      n: { type: 'number', default: 2 },
      b: { type: 'boolean', default: true },
      s: { type: 'string', default: null },
    });
  });

  it('a string that is only a placeholder keeps the param type', () => {
    const { pipeline } = load(
      {
        'agents.yaml': `params:\n  rounds: 4\nagents:\n  - id: s\n    type: session\n    participants: [a]\n    max_rounds: \${{ params.rounds }}\n  - id: a\n    runtime: claude\n`,
      },
      'agents.yaml',
      { params: { rounds: '7' } },
    );
    expect(pipeline.agents[0]).toMatchObject({ max_rounds: 7 });
  });

  it('an unset optional param is null and substitutes as ""', () => {
    const { pipeline, agent } = load(
      {
        'agents.yaml': `params:\n  tone: { type: string }\nagents:\n  - id: a\n    runtime: claude\n    system_prompt: "[\${{ params.tone }}]"\n`,
      },
      'agents.yaml',
    );
    expect(pipeline.params).toEqual({ tone: null });
    expect(prompt(pipeline, agent)).toBe('[]');
  });
});

describe('a param is data', () => {
  const substitute = (value: unknown, params: Record<string, unknown>) => {
    const warnings: string[] = [];
    const result = substituteParams(value, params, {
      error: (_, message) => {
        throw new Error(message);
      },
      warning: (_, written) => warnings.push(written.replace('$', '')),
    });
    return { result, warnings };
  };

  it('in a gate command, a quoted environment variable whatever quotes it stands in', () => {
    const { result, warnings } = substitute(
      {
        gate: {
          command: `test \${{ params.b }} = "x \${{ params.b }}" && echo '\${{ params.my-b }}' \\\${{ params.b }}`,
        },
      },
      { b: 'main; touch x #', 'my-b': 'y' },
    );
    expect(result).toEqual({
      gate: {
        command: `test "$TROUPE_PARAM_B" = "x \${TROUPE_PARAM_B}" && echo ''"$TROUPE_PARAM_MY_B"'' \\\${{ params.b }}`,
      },
    });
    expect(warnings).toEqual(['{{ params.b }}', '{{ params.b }}', '{{ params.my-b }}']);
  });

  it('in a template, a template variable; inside a tag, an expression', () => {
    const { result } = substitute(
      {
        system_prompt: `a \${{ params.b }}{% if "\${{ params.b }}" == 'x' %}!{% endif %}`,
        handoffs: [{ payload: `{{ output }} \${{ params.my-b }}` }],
        gate: { prompt: `\${{ params.b }}` },
        command: ['echo', `\${{ params.b }}`],
      },
      { b: '{{ 7*7 }}', 'my-b': 'y' },
    );
    expect(result).toEqual({
      system_prompt: `a {{ params.b }}{% if params.b == 'x' %}!{% endif %}`,
      handoffs: [{ payload: '{{ output }} {{ params["my-b"] }}' }],
      gate: { prompt: '{{ params.b }}' },
      command: ['echo', '{{ 7*7 }}'],
    });
  });
});

describe('coerceParam', () => {
  const def = (type: ParamDefinition['type']): ParamDefinition => ({
    type,
    default: null,
    required: false,
    description: '',
    prompt: null,
    auto_detect: null,
  });
  it.each([
    ['number', '42', 42],
    ['number', '-1.5', -1.5],
    ['number', 7, 7],
    ['boolean', 'true', true],
    ['boolean', 'YES', true],
    ['boolean', '1', true],
    ['boolean', 'off', false],
    ['boolean', 'no', false],
    ['string', 3, '3'],
    ['string', 'x', 'x'],
  ] as const)('%s %j → %j', (type, input, output) => {
    expect(coerceParam(def(type), input)).toEqual({ ok: true, value: output });
  });
  it.each([
    ['number', 'many'],
    ['number', ''],
    ['boolean', 'maybe'],
    ['string', { a: 1 }],
  ] as const)('%s %j is refused', (type, input) => {
    expect(coerceParam(def(type), input).ok).toBe(false);
  });
});

describe('param errors', () => {
  it('a --param value that does not fit the type, at the param', () => {
    const dir = tempDir({ 'agents.yaml': PIPELINE });
    expect(() => loadPipeline(path.join(dir, 'agents.yaml'), { params: { rounds: 'lots' } })).toThrow(
      /agents\.yaml:3:3: param `rounds`: expected a number, not "lots"/,
    );
  });

  it('an unknown --param, with the declared ones as hint', () => {
    const { lines, diagnostics } = validateYaml(PIPELINE, { params: { modle: 'x' } });
    expect(lines).toEqual(['agents.yaml:1:1 error: unknown param `modle` given with --param']);
    expect(diagnostics[0]?.hint).toBe('did you mean `model`?');
  });

  it('two params a command gate would read from one variable, at the second', () => {
    const { lines } = validateYaml(
      'params:\n  base-ref: main\n  base_ref: dev\nagents:\n  - id: a\n    runtime: claude\n',
    );
    expect(lines).toEqual([
      'agents.yaml:3:3 error: params `base-ref` and `base_ref` would both be TROUPE_PARAM_BASE_REF in a command gate',
    ]);
  });

  it('a reference to an undeclared param, at the string', () => {
    const { lines, diagnostics } = validateYaml(
      `params:\n  model: x\nagents:\n  - id: a\n    runtime: claude\n    model: \${{ params.modl }}\n`,
    );
    expect(lines).toEqual(['agents.yaml:6:12 error: unknown param `modl`']);
    expect(diagnostics[0]?.hint).toBe('did you mean `model`?');
  });

  it(`a \${{ }} that is not a param reference`, () => {
    const { lines } = validateYaml(
      `agents:\n  - id: a\n    runtime: claude\n    system_prompt: "\${{ input }}"\n`,
    );
    expect(lines).toEqual([
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the message quotes the placeholder
      'agents.yaml:4:20 error: `${{ input }}` is not a param reference: only `${{ params.NAME }}` is substituted',
    ]);
  });

  it('a required param without a value fails loading, with the flag as hint', () => {
    const yaml = 'params:\n  repo:\n    required: true\nagents:\n  - id: a\n    runtime: claude\n';
    const dir = tempDir({ 'agents.yaml': yaml });
    let error: unknown;
    try {
      loadPipeline(path.join(dir, 'agents.yaml'));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PipelineError);
    expect((error as PipelineError).detail).toBe('required param `repo` has no value');
    expect([(error as PipelineError).line, (error as PipelineError).col]).toEqual([2, 3]);
    expect((error as PipelineError).hint).toBe('--param repo=value');
    expect(loadPipeline(path.join(dir, 'agents.yaml'), { params: { repo: 'x' } }).params).toEqual({
      repo: 'x',
    });
  });

  it('validate does not need values for required params', () => {
    const { lines } = validateYaml(
      `params:\n  repo: { required: true }\n  n: { type: number, required: true }\nagents:\n  - id: a\n    runtime: scripted\n    context_window: \${{ params.n }}\n    system_prompt: "\${{ params.repo }}"\n`,
    );
    expect(lines).toEqual([]);
  });

  it('a default of the wrong type, at the default', () => {
    const { lines } = validateYaml(
      'params:\n  n:\n    type: number\n    default: lots\nagents:\n  - id: a\n    runtime: scripted\n',
    );
    expect(lines).toEqual(['agents.yaml:4:14 error: param `n`: expected a number, not "lots"']);
  });
});

describe('the params file', () => {
  it('is found beside the pipeline', () => {
    const { pipeline } = load(
      { 'pipes/agents.yaml': PIPELINE, 'pipes/params.yaml': 'model: opus\n' },
      'pipes/agents.yaml',
    );
    expect(pipeline.params.model).toBe('opus');
  });

  it.each(['.troupe', '.aqm'])(
    'is found in the project dir %s for a pipeline in its pipelines/ (aqm looked in .aqm/.aqm/)',
    (dir) => {
      const { pipeline } = load(
        { [`${dir}/pipelines/dev.yaml`]: PIPELINE, [`${dir}/params.yaml`]: 'model: opus\n' },
        `${dir}/pipelines/dev.yaml`,
      );
      expect(pipeline.params.model).toBe('opus');
    },
  );

  it('prefers the one beside the pipeline to the project one', () => {
    const { pipeline } = load(
      {
        '.troupe/pipelines/dev.yaml': PIPELINE,
        '.troupe/pipelines/params.yaml': 'model: near\n',
        '.troupe/params.yaml': 'model: far\n',
      },
      '.troupe/pipelines/dev.yaml',
    );
    expect(pipeline.params.model).toBe('near');
  });

  it('--params-file replaces the discovered one', () => {
    const dir = tempDir({
      'agents.yaml': PIPELINE,
      'params.yaml': 'model: near\n',
      'prod.yaml': 'model: prod\n',
    });
    const pipeline = loadPipeline(path.join(dir, 'agents.yaml'), { paramsFile: path.join(dir, 'prod.yaml') });
    expect(pipeline.params.model).toBe('prod');
  });

  it('a missing --params-file is a usage error', () => {
    const dir = tempDir({ 'agents.yaml': PIPELINE });
    expect(() =>
      loadPipeline(path.join(dir, 'agents.yaml'), { paramsFile: path.join(dir, 'nope.yaml') }),
    ).toThrow(UsageError);
  });

  it('names the pipeline does not declare are a warning in a --params-file, ignored in a shared one', () => {
    const explicit = validateYaml(PIPELINE, {
      files: { 'mine.yaml': 'model: x\nmodle: y\n' },
    });
    expect(explicit.lines).toEqual([]);
    const withFile = validateYaml(PIPELINE, {
      files: { 'mine.yaml': 'model: x\nmodle: y\n' },
      paramsFile: path.join(explicit.dir, 'mine.yaml'),
    });
    expect(withFile.lines).toEqual(['mine.yaml:2:1 warning: the pipeline declares no param `modle`']);
    const shared = validateYaml(PIPELINE, {
      files: { 'params.yaml': 'model: x\nother_pipeline_param: y\n' },
    });
    expect(shared.lines).toEqual([]);
  });

  it('a value of the wrong type in the file, at the value', () => {
    const { lines } = validateYaml(PIPELINE, { files: { 'params.yaml': 'rounds: many\n' } });
    expect(lines).toEqual(['params.yaml:1:9 error: param `rounds`: expected a number, not "many"']);
  });

  it('a params file that is not a mapping', () => {
    const { lines } = validateYaml(PIPELINE, { files: { 'params.yaml': '- a\n' } });
    expect(lines).toEqual(['params.yaml:1:1 error: a params file must be a mapping of param name to value']);
  });

  it('is not read by a pipeline without params', () => {
    const { lines } = validateYaml('agents:\n  - id: a\n    runtime: scripted\n', {
      files: { 'params.yaml': '[' },
    });
    expect(lines).toEqual([]);
  });
});
