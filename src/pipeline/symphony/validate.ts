import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PipelineError } from '../../core/errors.js';
import type { Pipeline } from '../../core/pipeline.js';
import { type Diagnostic, DiagnosticSink, toPipelineError } from '../diagnostics.js';
import { checkPrompt } from './liquid.js';
import { workflowPipeline } from './pipeline.js';
import { type IgnoredKey, readWorkflow, type Workflow } from './workflow.js';

export interface WorkflowValidation {
  /** Set when the file reads. */
  workflow?: Workflow;
  /** Set when there are no errors. */
  pipeline?: Pipeline;
  /** Errors and warnings, sorted by position. */
  diagnostics: Diagnostic[];
  /** Keys troupe does not read: not errors (Symphony asks for forward compatibility). */
  ignored: IgnoredKey[];
}

/** Every problem of a WORKFLOW.md (front matter, settings, prompt template), located. */
export function validateWorkflowFile(file: string): WorkflowValidation {
  const absolute = path.resolve(file);
  const sink = new DiagnosticSink();
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    sink.error({ file: absolute, line: 1, col: 1 }, `missing_workflow_file: cannot read it (${reason})`);
    return { diagnostics: sink.list(), ignored: [] };
  }
  const workflow = readWorkflow(text, absolute, sink);
  if (!workflow) return { diagnostics: sink.list(), ignored: [] };
  checkPrompt(workflow, sink);
  let pipeline: Pipeline | undefined;
  if (!sink.hasErrors) {
    try {
      pipeline = workflowPipeline(workflow, path.basename(absolute, path.extname(absolute)));
    } catch (error) {
      if (!(error instanceof PipelineError)) throw error;
      sink.error(workflow.position(['codex']), error.detail, error.hint);
    }
  }
  return {
    workflow,
    ...(pipeline && !sink.hasErrors ? { pipeline } : {}),
    diagnostics: sink.list(),
    ignored: workflow.ignored,
  };
}

/**
 * A WORKFLOW.md ready to use (for `troupe watch`): its settings, its prompt and its pipeline.
 * The first error is thrown as a PipelineError at its position.
 */
export function loadWorkflow(file: string): { workflow: Workflow; pipeline: Pipeline } {
  const result = validateWorkflowFile(file);
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0 || !result.workflow || !result.pipeline) throw toPipelineError(errors);
  return { workflow: result.workflow, pipeline: result.pipeline };
}
