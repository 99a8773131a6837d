import { describe, expect, it } from 'vitest';
import { renderTemplate } from '../../pipeline/lang/template.js';
import type { Branch } from '../fold/task-state.js';
import { branchesVariable } from './branches-variable.js';

const branches: Branch[] = [
  { agent: 'sec', stage: 2, output: 'no injection', input: 'payload a' },
  { agent: 'perf', stage: 3, output: 'N+1 query', input: 'payload b' },
];
const render = (template: string) => renderTemplate(template, { branches: branchesVariable(branches) }, 't');

describe('{{ branches }}', () => {
  it('prints each branch’s agent, stage and output, in the simple renderer and in nunjucks', () => {
    const text = '## from sec (stage 2)\n\nno injection\n\n## from perf (stage 3)\n\nN+1 query';
    expect(render('{{ branches }}')).toBe(text);
    expect(render('{{ branches }}{% if true %}!{% endif %}')).toBe(`${text}!`);
  });

  it('stays a list for loops, filters and fields', () => {
    expect(render('{% for b in branches %}[{{ b.agent }}] {{ b.output }};{% endfor %}')).toBe(
      '[sec] no injection;[perf] N+1 query;',
    );
    expect(render('{{ branches | length }} {{ branches[1].agent }} {{ branches[0] }}')).toBe(
      '2 perf ## from sec (stage 2)\n\nno injection',
    );
  });

  it('leaves the task state’s branches as they were', () => {
    branchesVariable(branches);
    expect(String(branches[0])).toBe('[object Object]');
    expect(Object.keys(branchesVariable(branches)[0]!)).toEqual(['agent', 'stage', 'output', 'input']);
  });
});
