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
    `${WORK_ON} (${issue.identifier}): ${issue.title}`,
    ...(issue.url ? [`URL: ${issue.url}`] : []),
    ...(issue.labels.length ? [`Labels: ${issue.labels.join(', ')}`] : []),
    '',
    issue.description.trim() || '(no description)',
  ].join('\n');
}

const WORK_ON = 'Work on this issue';

/** The issue's title in an input `issueInput` wrote without a workflow; null for any other input. */
export function issueTitleIn(input: string): string | null {
  const first = input.split('\n')[0]!;
  if (!first.startsWith(`${WORK_ON} (`)) return null;
  const title = first.slice(first.indexOf('): ') + 3).trim();
  return first.includes('): ') && title ? title : null;
}

export function issueRef(source: string, issue: TrackerIssue): TaskIssueRef {
  return { source, id: issue.id, identifier: issue.identifier, url: issue.url, state: issue.state };
}
