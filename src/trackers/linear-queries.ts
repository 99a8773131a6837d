/**
 * The GraphQL documents the Linear tracker sends (docs/trackers.md, "Linear"), shaped after
 * Symphony's Linear client: one place, so the loopback mock (test/fixtures/linear-api/) answers
 * exactly these, by operation name.
 */

/** Issues a page, as Symphony asks. */
export const PAGE_SIZE = 50;
/**
 * Labels, relations and sub-issues read per issue: Linear refuses a query above 10,000
 * complexity points, and a connection multiplies its nodes' cost by its `first`, so 50 issues
 * with three connections of 50 would be refused; 20 keeps a page near 7,000.
 */
export const RELATION_PAGE_SIZE = 20;

const ISSUE_FIELDS = `
      id
      identifier
      title
      description
      priority
      state { name }
      url
      assignee { id }
      labels(first: $relationFirst) { nodes { name } }
      inverseRelations(first: $relationFirst) { nodes { type issue { id identifier state { name } } } }
      children(first: $relationFirst) { nodes { id identifier state { name } } }
      createdAt
      updatedAt`;

export const CANDIDATES = `query TroupeLinearCandidates($projectSlug: String!, $stateNames: [String!]!, $first: Int!, $relationFirst: Int!, $after: String) {
  issues(filter: {project: {slugId: {eq: $projectSlug}}, state: {name: {in: $stateNames}}}, first: $first, after: $after) {
    nodes {${ISSUE_FIELDS}
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

/**
 * The candidates of one assignee (WORKFLOW.md's `tracker.assignee`, `me` resolved to the key's
 * viewer first): Linear filters them, so another person's issues never come back.
 */
export const ASSIGNED_CANDIDATES = `query TroupeLinearAssignedCandidates($projectSlug: String!, $stateNames: [String!]!, $assigneeId: ID!, $first: Int!, $relationFirst: Int!, $after: String) {
  issues(filter: {project: {slugId: {eq: $projectSlug}}, state: {name: {in: $stateNames}}, assignee: {id: {eq: $assigneeId}}}, first: $first, after: $after) {
    nodes {${ISSUE_FIELDS}
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const STATES = `query TroupeLinearStates($ids: [ID!]!, $first: Int!) {
  issues(filter: {id: {in: $ids}}, first: $first) {
    nodes { id state { name } assignee { id } }
  }
}`;

export const VIEWER = `query TroupeLinearViewer {
  viewer { id }
}`;

export const ISSUE_ASSIGNEE = `query TroupeLinearIssueAssignee($id: String!) {
  issue(id: $id) { id assignee { id } }
}`;

export const TEAM_STATES = `query TroupeLinearTeamStates($id: String!, $first: Int!) {
  issue(id: $id) { id team { states(first: $first) { nodes { id name } } } }
}`;

export const ISSUE_UPDATE = `mutation TroupeLinearIssueUpdate($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success }
}`;

export const COMMENT_CREATE = `mutation TroupeLinearCommentCreate($input: CommentCreateInput!) {
  commentCreate(input: $input) { success comment { id } }
}`;

export const COMMENT_UPDATE = `mutation TroupeLinearCommentUpdate($id: String!, $input: CommentUpdateInput!) {
  commentUpdate(id: $id, input: $input) { success comment { id } }
}`;

/** The operation name of a document above (its first `query X`/`mutation X`). */
export function operationName(document: string): string {
  return /^(?:query|mutation) (\w+)/.exec(document)?.[1] ?? '';
}
