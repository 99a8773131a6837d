import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TrackerIssue } from '../../core/tracker.js';
import { DiagnosticSink } from '../diagnostics.js';
import { checkPrompt, DEFAULT_PROMPT, renderPrompt, WorkflowTemplateError } from './liquid.js';
import { readWorkflow, type Workflow } from './workflow.js';

const FIXTURE = 'test/fixtures/symphony/elixir-WORKFLOW.md';

function workflow(text: string, file = 'WORKFLOW.md'): Workflow {
  const sink = new DiagnosticSink();
  const read = readWorkflow(text, file, sink);
  if (!read) throw new Error(JSON.stringify(sink.list()));
  return read;
}

const issue: TrackerIssue & { branch_name?: string | null } = {
  id: 'i-1',
  identifier: 'ENG-1',
  title: 'Fix it',
  description: 'Steps',
  priority: 2,
  state: 'Todo',
  labels: ['Bug', 'ui'],
  blocked_by: [{ id: 'i-0', identifier: 'ENG-0', state: 'Done' }],
  url: 'https://linear.app/x/issue/ENG-1',
  created_at: '2026-01-01T00:00:00Z',
  updated_at: null,
};

function renderError(w: Workflow, attempt: number | null = null): WorkflowTemplateError {
  try {
    renderPrompt(w, issue, attempt);
  } catch (error) {
    if (error instanceof WorkflowTemplateError) return error;
    throw error;
  }
  throw new Error('expected a template error');
}

function problems(w: Workflow): string[] {
  const sink = new DiagnosticSink();
  checkPrompt(w, sink);
  return sink.list().map((d) => `${d.line}:${d.col} ${d.message}`);
}

describe('the strict Liquid prompt', () => {
  it("renders Symphony's own prompt for its golden issues (elixir/test/fixtures/golden_dataset)", () => {
    const w = workflow(readFileSync(FIXTURE, 'utf8'));
    expect(problems(w)).toEqual([]);
    const golden = JSON.parse(readFileSync('test/fixtures/symphony/workflow_prompt_cases.json', 'utf8'));
    for (const c of golden.cases) {
      const prompt = renderPrompt(w, { created_at: null, updated_at: null, ...c.issue }, c.attempt);
      for (const expected of c.expect_prompt_contains) expect(prompt, c.id).toContain(expected);
      expect(prompt.includes('Continuation context:'), c.id).toBe(c.attempt !== null);
    }
  });

  it('supports the constructs Symphony prompts use: if/else, for, filters', () => {
    const w = workflow(
      '{% if attempt %}retry {{ attempt }}{% else %}first{% endif %}|{{ issue.labels | join: ", " | upcase }}|' +
        '{% for b in issue.blocked_by %}{{ b.identifier }}={{ b.state | downcase }}{% endfor %}|' +
        '{{ issue.branch_name | default: "none" }}|{{ issue.priority }}|{{ issue.labels }}',
    );
    expect(renderPrompt(w, issue, null)).toBe('first|BUG, UI|ENG-0=done|none|2|bugui');
    expect(renderPrompt(w, { ...issue, branch_name: 'eng-1' }, 3)).toMatch(/^retry 3\|.*\|eng-1\|/);
  });

  it('treats an empty description as none, so the fallback of the prompt shows', () => {
    const w = workflow(
      '{% if issue.description %}{{ issue.description }}{% else %}No description provided.{% endif %}',
    );
    expect(renderPrompt(w, { ...issue, description: '' }, null)).toBe('No description provided.');
  });

  it('renders hostile issue text verbatim: it is data, never parsed as a template', () => {
    const w = workflow('Title: {{ issue.title }}\n{{ issue.description }}');
    const hostile =
      "{{ attempt }} {% if true %}x{% endif %} {% include '/etc/passwd' %} {{ issue.nope }} {% raw %}";
    expect(renderPrompt(w, { ...issue, title: hostile, description: '{%- endraw -%}}}' }, 1)).toBe(
      `Title: ${hostile}\n{%- endraw -%}}}`,
    );
  });

  it('refuses an unknown variable at render time, located in WORKFLOW.md', () => {
    const w = workflow('---\ntracker:\n  kind: memory\n---\n\nHello\n  {{ issue.assignee }}\n');
    const error = renderError(w);
    expect(error.kind).toBe('template_render_error');
    expect(error.message).toBe('WORKFLOW.md:7:6: template_render_error: undefined variable: issue.assignee');
  });

  it('finds unknown variables and filters without an issue, in branches not taken too', () => {
    const w = workflow(
      '---\npolling:\n  interval_ms: 1000\n---\n{{ issue.title }}\n{% if attempt %}{{ ticket.id }}{% endif %}\n{{ issue.title | shout }}\n{% for b in issue.blocked_by %}{{ b.identifier }}{% endfor %}',
    );
    // the parse stops at the first unknown filter, as Symphony's does
    expect(problems(w)).toEqual(['7:1 template_parse_error: undefined filter: shout']);
    const vars = workflow(
      'x\n{% if attempt %}{{ ticket.id }}{% endif %} {{ issue.blocked_by[0].identifier }} {{ issue.nope }}',
    );
    expect(problems(vars)).toEqual([
      '2:20 template_render_error: undefined variable: ticket.id',
      '2:84 template_render_error: undefined variable: issue.nope',
    ]);
  });

  it('refuses unclosed tags and tags that read files, located', () => {
    expect(problems(workflow('ok\n\n  {% if attempt %}never closed'))).toEqual([
      '3:3 template_parse_error: tag {% if attempt %} not closed',
    ]);
    expect(problems(workflow('{% render "secrets" %}'))[0]).toMatch(
      /^1:1 template_parse_error: .*reads other files/,
    );
  });

  it('keeps a hostile template bounded and away from prototypes: one error, fast', () => {
    for (const template of [
      '{{ issue.constructor }}',
      '{{ issue.title.constructor.name }}',
      '{% for i in (1..100000000) %}{% endfor %}',
    ]) {
      const started = Date.now();
      expect(renderError(workflow(template)).kind, template).toBe('template_render_error');
      expect(Date.now() - started).toBeLessThan(2000);
    }
  });

  it("renders an empty prompt as Symphony's default one", () => {
    expect(renderPrompt(workflow('---\npolling:\n  interval_ms: 10\n---\n\n'), issue, null)).toBe(
      DEFAULT_PROMPT,
    );
  });
});
