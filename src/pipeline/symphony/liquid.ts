import { createRequire } from 'node:module';
import type { Liquid, Template } from 'liquidjs';
import { PipelineError } from '../../core/errors.js';
import type { SourcePosition } from '../../core/pipeline.js';
import type { TrackerIssue } from '../../core/tracker.js';
import type { DiagnosticSink } from '../diagnostics.js';
import type { Workflow } from './workflow.js';

/**
 * A WORKFLOW.md prompt rendered as Symphony renders it: Liquid (liquidjs, the Liquid of Shopify's
 * semantics, as Symphony's Solid), strict — an unknown variable or filter is an error, located in
 * WORKFLOW.md. The template is parsed once; the issue's text is data, never parsed as a template.
 * No file is ever read (`include`/`render`/`layout` are refused), and parse, render time and
 * memory are bounded, so a hostile template is one error rather than a hung watcher.
 * liquidjs is loaded on first use (as ajv is), so commands that never read a WORKFLOW.md do not
 * pay for it.
 */

export type TemplateErrorKind = 'template_parse_error' | 'template_render_error';

/** A prompt that cannot be rendered: Symphony's error class, and where in WORKFLOW.md. */
export class WorkflowTemplateError extends PipelineError {
  constructor(
    readonly kind: TemplateErrorKind,
    readonly at: SourcePosition,
    message: string,
  ) {
    super(at.file, at.line, at.col, `${kind}: ${message}`);
  }
}

/** The prompt of a WORKFLOW.md whose body is empty (Symphony's own fallback). */
export const DEFAULT_PROMPT = 'You are working on an issue from Linear.';

/** What a prompt may read: `issue.*` (Symphony's issue model) and `attempt`. */
export const ISSUE_FIELDS = [
  'id',
  'identifier',
  'title',
  'description',
  'priority',
  'state',
  'branch_name',
  'url',
  'labels',
  'blocked_by',
  'created_at',
  'updated_at',
] as const;
const BLOCKER_FIELDS = ['id', 'identifier', 'state'];

/** The issue as the template sees it: the tracker's issue, with a branch name when it has one. */
export type PromptIssue = TrackerIssue & { branch_name?: string | null };

const FILE_TAGS = ['include', 'render', 'layout'];

const requireHere = createRequire(import.meta.url);

function makeEngine(): Liquid {
  const { Liquid, Tag } = requireHere('liquidjs') as typeof import('liquidjs');
  const engine = new Liquid({
    strictVariables: true,
    strictFilters: true,
    ownPropertyOnly: true,
    // an empty in-memory file system: nothing outside the template is ever read
    templates: {},
    parseLimit: 1_000_000,
    renderLimit: 5_000,
    memoryLimit: 64 * 1024 * 1024,
  });
  for (const name of FILE_TAGS)
    engine.registerTag(
      name,
      class extends Tag {
        constructor(...args: ConstructorParameters<typeof import('liquidjs').Tag>) {
          super(...args);
          throw new Error(`{% ${name} %} reads other files: a WORKFLOW.md prompt is one template`);
        }
        *render(): Generator<never, void, unknown> {}
      },
    );
  return engine;
}

let shared: Liquid | undefined;
const engine = () => {
  shared ??= makeEngine();
  return shared;
};

/** Where a position of the template (1-based line and column) is in WORKFLOW.md. */
function inFile(workflow: Pick<Workflow, 'promptAt'>, line: number, col: number): SourcePosition {
  const start = workflow.promptAt;
  return { file: start.file, line: start.line + line - 1, col: line === 1 ? start.col + col - 1 : col };
}

interface LiquidErrorLike {
  message: string;
  token?: { getPosition?: () => [number, number] };
  originalError?: Error;
}

function located(
  workflow: Pick<Workflow, 'promptAt'>,
  kind: TemplateErrorKind,
  error: unknown,
): WorkflowTemplateError {
  const e = error as LiquidErrorLike;
  const [line, col] = e.token?.getPosition?.() ?? [1, 1];
  const message = (e.originalError?.message ?? e.message ?? String(error)).replace(
    /, line:\d+, col:\d+$/,
    '',
  );
  return new WorkflowTemplateError(kind, inFile(workflow, line, col), message);
}

const parsed = new WeakMap<object, Template[]>();

/** The prompt's template, parsed once per workflow; throws a template_parse_error. */
export function parsePrompt(workflow: Pick<Workflow, 'prompt' | 'promptAt'>): Template[] {
  let templates = parsed.get(workflow);
  if (!templates) {
    try {
      templates = engine().parse(workflow.prompt);
    } catch (error) {
      throw located(workflow, 'template_parse_error', error);
    }
    parsed.set(workflow, templates);
  }
  return templates;
}

/**
 * Every problem of the prompt found without an issue: syntax, unknown filters and tags, and
 * variables other than `issue.<field>` and `attempt` (anywhere, in branches a sample issue
 * would not take too).
 */
export function checkPrompt(workflow: Pick<Workflow, 'prompt' | 'promptAt'>, sink: DiagnosticSink): void {
  let templates: Template[];
  try {
    templates = parsePrompt(workflow);
  } catch (error) {
    if (!(error instanceof WorkflowTemplateError)) throw error;
    sink.error(
      error.at,
      error.detail,
      'Liquid: {{ issue.title }}, {% if attempt %}…{% endif %}, {% for … %}',
    );
    return;
  }
  const analysis = engine().analyzeSync(templates, { partials: false });
  for (const variables of Object.values(analysis.globals)) {
    for (const variable of variables) {
      const problem = unknownVariable(variable.segments.map(String));
      if (!problem) continue;
      sink.error(
        inFile(workflow, variable.location.row, variable.location.col),
        `template_render_error: undefined variable: ${variable.toString()}`,
        problem,
      );
    }
  }
}

function unknownVariable([root, field, ...rest]: string[]): string | null {
  if (root === 'attempt')
    return field === undefined ? null : '`attempt` is a number (or nil on the first run)';
  if (root !== 'issue') return 'a prompt reads `issue.<field>` and `attempt` only';
  if (field === undefined || (ISSUE_FIELDS as readonly string[]).includes(field)) {
    if (field === 'blocked_by' && rest.length >= 2 && !BLOCKER_FIELDS.includes(rest[1] ?? ''))
      return `a blocker has ${BLOCKER_FIELDS.join(', ')}`;
    return null;
  }
  return `an issue has ${ISSUE_FIELDS.join(', ')}`;
}

/**
 * The prompt for one issue (`attempt`: null on the first run, a number on a retry or a
 * continuation). Throws a WorkflowTemplateError located in WORKFLOW.md.
 */
export function renderPrompt(workflow: Workflow, issue: PromptIssue, attempt: number | null): string {
  // Symphony's fallback for a workflow with no prompt
  if (workflow.prompt === '') return DEFAULT_PROMPT;
  const templates = parsePrompt(workflow);
  try {
    return engine().renderSync(templates, { issue: promptIssue(issue), attempt });
  } catch (error) {
    throw located(workflow, 'template_render_error', error);
  }
}

/** Symphony's issue model as plain data: every field present (nil when unknown). */
function promptIssue(issue: PromptIssue): Record<string, unknown> {
  return {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    // an empty description is none, as trackers report it (so `{% if issue.description %}` works)
    description: issue.description ? issue.description : null,
    priority: issue.priority,
    state: issue.state,
    branch_name: issue.branch_name ?? null,
    url: issue.url,
    labels: issue.labels.map((l) => l.toLowerCase()),
    blocked_by: issue.blocked_by.map((b) => ({ id: b.id, identifier: b.identifier, state: b.state })),
    created_at: issue.created_at,
    updated_at: issue.updated_at,
  };
}
