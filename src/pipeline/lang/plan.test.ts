import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { inDependencyOrder, planJsonSchemaText, readPlan } from './plan.js';

const piece = (id: string, paths: string[], depends_on: string[] = []) => ({
  id,
  goal: `build ${id}`,
  paths,
  depends_on,
});
const plan = (...pieces: unknown[]) => `Here is the plan.\n${JSON.stringify({ pieces })}`;

describe('schema/plan.schema.json', () => {
  it('is the schema troupe checks plans against', () => {
    const onDisk = readFileSync(new URL('../../../schema/plan.schema.json', import.meta.url), 'utf8');
    expect(onDisk === planJsonSchemaText(), 'schema/plan.schema.json is stale: run `npm run schema`').toBe(
      true,
    );
  });
});

describe('readPlan', () => {
  it('reads the last JSON object of the output, pieces after their dependencies', () => {
    const read = readPlan(
      plan(piece('ui', ['web/'], ['api']), piece('api', ['src/api.ts']), piece('docs', ['./docs//a.md'])),
    );
    expect(read).toEqual({
      pieces: [
        {
          id: 'api',
          goal: 'build api',
          paths: ['src/api.ts'],
          depends_on: [],
          size: null,
          labels: [],
          checks: [],
        },
        {
          id: 'ui',
          goal: 'build ui',
          paths: ['web/'],
          depends_on: ['api'],
          size: null,
          labels: [],
          checks: [],
        },
        {
          id: 'docs',
          goal: 'build docs',
          paths: ['docs/a.md'],
          depends_on: [],
          size: null,
          labels: [],
          checks: [],
        },
      ],
      warnings: [],
    });
  });

  it('sends back output without a plan, and a plan that breaks the schema, saying where', () => {
    expect(readPlan('I would split it in three.')).toEqual({
      errors: ['no JSON object found in the output: write the plan as {"pieces": [...]}'],
    });
    const bad = readPlan(plan({ id: 'Bad Id', goal: 'x', paths: ['/etc/passwd'] }));
    expect('errors' in bad && bad.errors.join('\n')).toMatch(/id.*pattern|pattern.*id/is);
    const outside = readPlan(plan(piece('a', ['src/../../x'])));
    expect('errors' in outside && outside.errors.join('\n')).toMatch(/paths/);
  });

  it('refuses unknown dependencies and cycles, naming the pieces', () => {
    expect(readPlan(plan(piece('a', ['a/'], ['ghost'])))).toEqual({
      errors: ['piece a depends on ghost, which is not in the plan'],
    });
    expect(readPlan(plan(piece('a', ['a/'], ['a'])))).toEqual({ errors: ['piece a depends on itself'] });
    expect(
      readPlan(plan(piece('a', ['a/'], ['c']), piece('b', ['b/'], ['a']), piece('c', ['c/'], ['b']))),
    ).toEqual({
      errors: ['the dependencies go round: a → c → b → a'],
    });
    expect(readPlan(plan(piece('a', ['a/']), piece('a', ['b/'])))).toEqual({
      errors: ['two pieces are called a'],
    });
  });

  it('accepts a dependency on a piece an earlier round merged', () => {
    const read = readPlan(plan(piece('b', ['b/'], ['a'])), new Set(['a']));
    expect('pieces' in read && read.pieces.map((p) => p.id)).toEqual(['b']);
  });

  it('refuses a path owned by two pieces that could run at once, warns when one builds on the other', () => {
    expect(readPlan(plan(piece('a', ['src/']), piece('b', ['src/b.ts'])))).toEqual({
      errors: [
        'pieces a and b both own src/b.ts, and neither depends on the other: they would run at once and conflict',
      ],
    });
    const ordered = readPlan(plan(piece('a', ['src/x.ts']), piece('b', ['src/x.ts'], ['a'])));
    expect(ordered).toMatchObject({
      warnings: ['pieces a and b both own src/x.ts (a and b run one after the other)'],
    });
    expect(readPlan(plan(piece('a', ['src/a']), piece('b', ['src/ab'])))).toMatchObject({ warnings: [] });
  });

  it('checks a long chain of dependencies without recursion', () => {
    const chain = Array.from({ length: 200 }, (_, i) => piece(`p${i}`, [`f${i}`], i ? [`p${i - 1}`] : []));
    const read = readPlan(plan(...chain.reverse()));
    expect('pieces' in read && read.pieces[0]!.id).toBe('p0');
    expect(inDependencyOrder([]).length).toBe(0);
  });
});
