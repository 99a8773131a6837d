import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { isTroupeError } from '../core/errors.js';
import type { Pipeline } from '../core/pipeline.js';
import { parseScript } from '../runtimes/script.js';
import type { Diagnostic } from './diagnostics.js';
import { renderTemplate, TemplateError } from './lang/template.js';
import { loadPipelineText } from './load.js';
import { validatePipelineText } from './validate.js';

/**
 * Property tests of the pipeline loader: generated pipelines (valid ones, near-valid structures,
 * mutations of valid text, random YAML-ish text) must validate without throwing, every diagnostic
 * must say where, `loadPipelineText` must throw nothing but a located PipelineError, and what a
 * valid file says must be what the loaded pipeline holds. A fixed seed keeps `npm test` repeatable
 * and short; TROUPE_FUZZ_RUNS=5000 (and TROUPE_FUZZ_SEED) for a longer hunt. Findings and figures:
 * docs/reliability.md.
 */

const RUNS = Number(process.env.TROUPE_FUZZ_RUNS ?? 150);
const SEED = Number(process.env.TROUPE_FUZZ_SEED ?? 18);
const FILE = '/fuzz/agents.yaml';
const settings = { seed: SEED, numRuns: RUNS, endOnFailure: true };
// generous: the properties run a few seconds; this only catches a hang
const HANG = 120_000 + RUNS * 200;

// ── generators ───────────────────────────────────────────────────────────────

const ID = fc.constantFrom('a', 'b', 'c', 'dev', 'review', 'qa_1', 'x-y', 'A B', '../up', '', '*');
const CONDITION = fc.constantFrom(
  'always',
  'on_approve',
  'on_reject',
  'on_pass',
  'auto',
  'on_no_consensus',
  'alwasy',
  'score >= 8',
  'status == done and tests == pass',
  'status in [done, skipped]',
  'f(x)',
  '== ==',
);
const TEMPLATE_PIECE = fc.constantFrom(
  'Do it: ',
  '{{ input }}',
  '{{ output }}',
  '{{ inptu }}',
  '{{ input | upper }}',
  '{{ input | trim | truncate(5) }}',
  '{{ input | nosuchfilter }}',
  '{{ output.constructor }}',
  "{{ input['__proto__'] }}",
  '{{ params.x }}',
  '{% if input is string %}s{% endif %}',
  '{% if input is nosuchtest %}t{% endif %}',
  '{% for b in branches %}{{ b.agent }}{% endfor %}',
  '{% set y = input %}{{ y }}',
  '{{',
  '{% if %}',
  '}}',
);
const TEMPLATE = fc.array(TEMPLATE_PIECE, { maxLength: 4 }).map((parts) => parts.join(''));

const HANDOFF = fc.record(
  {
    to: fc.oneof(
      ID,
      fc.tuple(ID, ID).map(([x, y]) => `${x}, ${y}`),
    ),
    condition: CONDITION,
    payload: TEMPLATE,
  },
  { requiredKeys: ['to'] },
);
const GATE = fc.record(
  {
    type: fc.constantFrom('llm', 'human', 'command', 'vote'),
    prompt: TEMPLATE,
    max_retries: fc.integer({ min: -1, max: 5 }),
    command: fc.constantFrom('npm test', ''),
    verifier: ID,
  },
  { requiredKeys: [] },
);
/** Agents near enough to valid that most get past the schema and into the deeper checks. */
const AGENT = fc.record(
  {
    id: ID,
    type: fc.constantFrom('agent', 'session'),
    runtime: fc.constantFrom('scripted', 'claude', 'gemini', 'codex', 'openai', 'command', 'gpt'),
    system_prompt: TEMPLATE,
    handoffs: fc.array(HANDOFF, { maxLength: 3 }),
    gate: GATE,
    extends: ID,
    abstract: fc.boolean(),
    participants: fc.array(ID, { maxLength: 3 }),
    summary_agent: ID,
    command: fc.constantFrom(['npm', 'test'], []),
    context_window: fc.integer({ min: -2, max: 5 }),
    on_conflict: ID,
  },
  { requiredKeys: ['id'] },
);
const STRUCTURE = fc.record(
  {
    entry_point: fc.constantFrom('first', 'auto', 'last'),
    agents: fc.array(AGENT, { maxLength: 6 }),
    budget: fc.record({ tokens: fc.integer({ min: -1, max: 10_000 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: ['agents'] },
);

/** A valid pipeline by construction: n agents on scripted, handoffs only to agents that exist. */
const VALID = fc
  .integer({ min: 1, max: 8 })
  .chain((n) => {
    const id = fc.integer({ min: 0, max: n - 1 }).map((i) => `a${i}`);
    const agent = (i: number) =>
      fc
        .record({
          gated: fc.boolean(),
          prompt: fc.constantFrom(
            'Work on {{ input }}',
            '{{ input | upper }}',
            '{% if reject_reason %}{{ reject_reason }}{% endif %}',
          ),
          handoffs: fc.array(
            fc.record({
              to: id,
              condition: fc.constantFrom('always', 'on_pass', 'score >= 8', 'on_approve', 'on_reject'),
            }),
            { maxLength: 2 },
          ),
        })
        .map(({ gated, prompt, handoffs }) => ({
          id: `a${i}`,
          runtime: 'scripted',
          system_prompt: prompt,
          ...(gated ? { gate: { type: 'llm', prompt: 'Good? {{ output }}' } } : {}),
          handoffs: handoffs.filter(
            (h) => gated || (h.condition !== 'on_approve' && h.condition !== 'on_reject'),
          ),
        }));
    return fc.tuple(...Array.from({ length: n }, (_, i) => agent(i)));
  })
  .map((agents) => ({ agents }));

/** YAML-ish text: the tokens YAML and pipelines are made of, in any order. */
const YAMLISH = fc.string({
  unit: fc.constantFrom(
    'agents:',
    '\n',
    '\n  - ',
    '  ',
    'id: a',
    'runtime: scripted',
    'handoffs: [{to: a}]',
    'system_prompt: "{{ input }}"',
    ':',
    '- ',
    '[',
    ']',
    '{',
    '}',
    ',',
    '&x ',
    '*x',
    '<<: *x',
    '!!js/function ',
    '? ',
    '"',
    "'",
    '#',
    '|',
    '>',
    '\t',
    '---',
    '\u0000',
    '\uFEFF',
    'é',
    'x',
  ),
  maxLength: 60,
});

/** Edits of a valid file: cut a span, insert a token, duplicate or drop a line. */
const MUTATION = fc.record({
  at: fc.nat(),
  cut: fc.nat({ max: 6 }),
  insert: fc.constantFrom('', ':', '[', '}', '- ', '  ', '\n', '*x', '&x ', '"', '{{', 'agents:', '\t'),
});

// ── properties ───────────────────────────────────────────────────────────────

const oneLine = (s: string) => s.length > 0 && !s.includes('\n');

/** Every diagnostic says where (a real position in a file) and what, in one line. */
function expectLocated(diagnostics: Diagnostic[]): void {
  for (const d of diagnostics) {
    expect(d.file.startsWith('/')).toBe(true);
    expect(Number.isInteger(d.line) && d.line >= 1).toBe(true);
    expect(Number.isInteger(d.col) && d.col >= 1).toBe(true);
    expect(oneLine(d.message), d.message).toBe(true);
    if (d.hint !== undefined) expect(oneLine(d.hint), d.hint).toBe(true);
  }
}

/** The whole contract for one text: validate never throws, load agrees with it. */
function checkText(text: string): void {
  const result = validatePipelineText(text, FILE, { pathEnv: '' });
  expectLocated(result.diagnostics);
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  let loaded: Pipeline | undefined;
  try {
    loaded = loadPipelineText(text, FILE);
  } catch (error) {
    if (!isTroupeError(error) || error.code !== 'pipeline_invalid') throw error;
    expect(error.message).toMatch(/^\/fuzz\/agents\.yaml:\d+:\d+: \S/);
    expect(oneLine(error.message)).toBe(true);
  }
  // validate does not need values for required params; load does
  if (!text.includes('params'))
    expect(loaded !== undefined, JSON.stringify(errors[0])).toBe(errors.length === 0);
}

/** What the file says, as the engine reads it (without where it was written). */
function essence(pipeline: Pipeline) {
  return pipeline.agents.map((n) => ({
    id: n.id,
    type: n.type,
    runtime: n.type === 'agent' ? n.runtime : null,
    gate: n.type === 'agent' ? (n.gate?.type ?? null) : null,
    prompt: n.system_prompt,
    handoffs: n.handoffs.map((h) => ({ to: h.to, condition: h.condition })),
  }));
}

describe('pipeline fuzzing (fast-check)', () => {
  it(
    'random YAML-ish text: no throw, every problem located',
    () => fc.assert(fc.property(YAMLISH, checkText), settings),
    HANG,
  );

  it(
    'near-valid structures: no throw, every problem located, load agrees with validate',
    () =>
      fc.assert(
        fc.property(STRUCTURE, (doc) => checkText(stringify(doc))),
        settings,
      ),
    HANG,
  );

  it(
    'mutations of valid files: no throw, every problem located',
    () =>
      fc.assert(
        fc.property(VALID, fc.array(MUTATION, { minLength: 1, maxLength: 3 }), (doc, edits) => {
          let text = stringify(doc);
          for (const { at, cut, insert } of edits) {
            const i = at % (text.length + 1);
            text = text.slice(0, i) + insert + text.slice(i + cut);
          }
          checkText(text);
        }),
        settings,
      ),
    HANG,
  );

  it(
    'valid pipelines round-trip: validate passes, the loaded pipeline holds what was written',
    () =>
      fc.assert(
        fc.property(VALID, (doc) => {
          const text = stringify(doc);
          const result = validatePipelineText(text, FILE, { pathEnv: '' });
          expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
          const pipeline = loadPipelineText(text, FILE);
          expect(essence(pipeline)).toEqual(
            doc.agents.map((a) => ({
              id: a.id,
              type: 'agent',
              runtime: 'scripted',
              gate: a.gate?.type ?? null,
              prompt: a.system_prompt,
              handoffs: a.handoffs.map((h) => ({ to: [h.to], condition: h.condition })),
            })),
          );
          // and again after a trip through the YAML library's own reading and writing
          expect(essence(loadPipelineText(stringify(parse(text)), FILE))).toEqual(essence(pipeline));
        }),
        settings,
      ),
    HANG,
  );

  it(
    'a template validate accepts does not fail to render for want of a filter, a test or a safe key',
    () =>
      fc.assert(
        fc.property(TEMPLATE, (template) => {
          const text = stringify({ agents: [{ id: 'a', runtime: 'scripted', system_prompt: template }] });
          const { diagnostics } = validatePipelineText(text, FILE, { pathEnv: '' });
          if (diagnostics.some((d) => d.severity === 'error')) return;
          try {
            renderTemplate(template, { input: 'in', output: 'out', params: {}, branches: [] }, 'a');
          } catch (error) {
            // reading an attribute of a variable the stage was not given depends on the run
            if (!(error instanceof TemplateError) || !/is undefined/.test(error.detail)) throw error;
          }
        }),
        settings,
      ),
    HANG,
  );

  it(
    'scripts: random text is read or refused with a located script error',
    () =>
      fc.assert(
        fc.property(YAMLISH, (text) => {
          try {
            parseScript(text, '/fuzz/s.yaml');
          } catch (error) {
            if (!isTroupeError(error) || error.code !== 'script_invalid') throw error;
            expect(error.message).toMatch(/^\/fuzz\/s\.yaml:\d+:\d+: \S/);
          }
        }),
        settings,
      ),
    HANG,
  );
});
