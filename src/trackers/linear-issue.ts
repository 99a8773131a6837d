import { z } from 'zod';
import { TrackerError, type TrackerIssue } from '../core/tracker.js';

/**
 * A Linear issue node (docs/trackers.md, "Linear") read into troupe's issue, with Symphony's
 * semantics: priority 0 (none) is null, labels lower-cased, blockers from inverse `blocks`
 * relations, and sub-issues as blockers of their parent. Pure: the adapter (linear.ts) calls.
 */

const stateRef = z.object({ name: z.string() }).loose().nullish();
const issueRef = z.object({ id: z.string(), identifier: z.string(), state: stateRef }).loose();
const connection = <T extends z.ZodType>(node: T) =>
  z
    .object({ nodes: z.array(node) })
    .loose()
    .nullish()
    .transform((c) => c?.nodes ?? []);

export const linearIssue = z
  .object({
    id: z.string().min(1),
    identifier: z.string(),
    title: z.string(),
    description: z.string().nullish(),
    priority: z.number().nullish(),
    state: stateRef,
    url: z.string().nullish(),
    assignee: z.object({ id: z.string() }).loose().nullish(),
    labels: connection(z.object({ name: z.string().nullish() }).loose()),
    inverseRelations: connection(z.object({ type: z.string().nullish(), issue: issueRef.nullish() }).loose()),
    children: connection(issueRef),
    createdAt: z.string().nullish(),
    updatedAt: z.string().nullish(),
  })
  .loose();

export type LinearIssue = z.infer<typeof linearIssue>;

export function parseLinearIssue(item: unknown): LinearIssue {
  const parsed = linearIssue.safeParse(item);
  if (parsed.success) return parsed.data;
  const where = parsed.error.issues[0]?.path.join('.') || 'the answer';
  throw new TrackerError('invalid', `linear: the API answered something that is not an issue (at ${where})`);
}

/** Trimmed and lower-cased, as Symphony compares state names. */
export const normalState = (name: string) => name.trim().toLowerCase();

export function toTrackerIssue(issue: LinearIssue): TrackerIssue {
  const ref = (other: z.infer<typeof issueRef>) => ({
    id: other.id,
    identifier: other.identifier,
    state: other.state?.name ?? null,
  });
  const blockers = issue.inverseRelations
    .filter((relation) => normalState(relation.type ?? '') === 'blocks' && relation.issue)
    .map((relation) => ref(relation.issue!));
  // a parent is done when its sub-issues are: they come first
  for (const child of issue.children) {
    if (!blockers.some((b) => b.id === child.id)) blockers.push(ref(child));
  }
  const priority = issue.priority;
  return {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    description: issue.description ?? '',
    priority:
      priority !== null && priority !== undefined && [1, 2, 3, 4].includes(priority) ? priority : null,
    state: issue.state?.name ?? '',
    labels: issue.labels
      .map((label) => label.name ?? '')
      .filter((name) => name !== '')
      .map((name) => name.toLowerCase()),
    blocked_by: blockers,
    url: issue.url ?? null,
    created_at: issue.createdAt ?? null,
    updated_at: issue.updatedAt ?? null,
  };
}
