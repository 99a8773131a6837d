import { webAddress } from '../../src/core/web-address';
import type { TaskRow } from './api';

type Issue = NonNullable<TaskRow['issue']>;

/**
 * The tracker issue a task works on: its identifier, a link to the issue when the tracker gave an
 * http(s) address (any other scheme, `javascript:` among them, stays text), and its state. The
 * tracker wrote all three: React prints them as text. `linked={false}` inside something that is
 * itself a link (a link in a link is not HTML).
 */
export function IssueChip(props: { issue: Issue; linked?: boolean }) {
  const { issue } = props;
  const href = props.linked === false ? null : webAddress(issue.url);
  return (
    <span className="issue-chip" data-testid="issue" title={issue.source}>
      {href ? (
        <a
          href={href}
          target="_blank"
          rel="noopener noreferrer"
          data-testid="issue-link"
          // the row around it opens the task: a click on the issue opens the issue only
          onClick={(e) => e.stopPropagation()}
        >
          {issue.identifier}
        </a>
      ) : (
        <span data-testid="issue-identifier">{issue.identifier}</span>
      )}{' '}
      <span className="issue-state">{issue.state}</span>
    </span>
  );
}
