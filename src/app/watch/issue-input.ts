import type { TaskIssueRef, TrackerIssue } from '../../core/tracker.js';
import { renderPrompt } from '../../pipeline/symphony/liquid.js';
import type { Workflow } from '../../pipeline/symphony/workflow.js';

/**
 * A task's input for an issue: Symphony's prompt rendered for it when the watch reads a
 * WORKFLOW.md, else the issue as data. Issue text is hostile: it is put into the text as it is
 * and never parsed as a template (the pipeline's agents read it as `{{ input }}`, a value).
 */
export function issueInput(issue: TrackerIssue, attempt: number | null, workflow: Workflow | null): string {
  if (workflow) return renderPrompt(workflow, issue, attempt);
  return [
    `Work on this issue (${issue.identifier}): ${issue.title}`,
    ...(issue.url ? [`URL: ${issue.url}`] : []),
    ...(issue.labels.length ? [`Labels: ${issue.labels.join(', ')}`] : []),
    '',
    issue.description.trim() || '(no description)',
  ].join('\n');
}

export function issueRef(source: string, issue: TrackerIssue): TaskIssueRef {
  return { source, id: issue.id, identifier: issue.identifier, url: issue.url, state: issue.state };
}
