import { type EventStore, type IssueClaim, PENDING_CLAIM_TTL_MS } from '../core/event-store.js';

/**
 * The issue claims of EventStore (core/event-store.ts IssueClaim) on an `issue_claims` table, one
 * statement each (atomic on its own), for both SQL stores: SQLite's migration step 3 and
 * PostgreSQL's migration 7 create the same table (with `pull_request` from SQLite's step 4 and
 * PostgreSQL's migration 8). `query` runs one statement with `?` parameters
 * and returns its rows (every statement here has RETURNING).
 */

export type ClaimQuery = (sql: string, params: unknown[]) => ClaimRow[];

export interface ClaimRow {
  source: string;
  issue_id: string;
  task_id: string | null;
  attempts: number;
  retry_at: string | null;
  comment_id: string | null;
  pull_request: string | null;
  claimed_at: string;
}

export type IssueClaimStore = Pick<
  EventStore,
  'claimIssue' | 'updateIssueClaim' | 'releaseIssue' | 'issueClaims'
>;

const claimOf = (row: ClaimRow): IssueClaim => ({
  source: row.source,
  issueId: row.issue_id,
  taskId: row.task_id,
  attempts: Number(row.attempts),
  retryAt: row.retry_at,
  commentId: row.comment_id,
  pullRequest: row.pull_request,
  claimedAt: row.claimed_at,
});

export function issueClaimsOn(query: ClaimQuery): IssueClaimStore {
  return {
    claimIssue(source, issueId, now) {
      // a pending claim older than the TTL (its watcher died before creating the task) is taken over
      const stale = new Date(now.getTime() - PENDING_CLAIM_TTL_MS).toISOString();
      const [row] = query(
        `INSERT INTO issue_claims (source, issue_id, task_id, attempts, retry_at, claimed_at)
         VALUES (?, ?, NULL, 0, NULL, ?)
         ON CONFLICT (source, issue_id) DO UPDATE SET claimed_at = excluded.claimed_at, attempts = 0, retry_at = NULL, comment_id = NULL, pull_request = NULL
         WHERE issue_claims.task_id IS NULL AND issue_claims.claimed_at <= ?
         RETURNING *`,
        [source, issueId, now.toISOString(), stale],
      );
      return row ? claimOf(row) : null;
    },
    updateIssueClaim(source, issueId, change, ifRetryAt) {
      const sets: string[] = [];
      const values: unknown[] = [];
      for (const [column, value] of [
        ['task_id', change.taskId],
        ['attempts', change.attempts],
        ['retry_at', change.retryAt],
        ['comment_id', change.commentId],
        ['pull_request', change.pullRequest],
      ] as const) {
        if (value === undefined) continue;
        sets.push(`${column} = ?`);
        values.push(value);
      }
      if (sets.length === 0) sets.push('attempts = attempts');
      const guard = ifRetryAt === undefined ? '' : ' AND retry_at IS NOT DISTINCT FROM ?';
      const rows = query(
        `UPDATE issue_claims SET ${sets.join(', ')} WHERE source = ? AND issue_id = ?${guard} RETURNING *`,
        [...values, source, issueId, ...(ifRetryAt === undefined ? [] : [ifRetryAt])],
      );
      return rows.length > 0;
    },
    releaseIssue(source, issueId) {
      query('DELETE FROM issue_claims WHERE source = ? AND issue_id = ? RETURNING *', [source, issueId]);
    },
    issueClaims: (source) =>
      query('SELECT * FROM issue_claims WHERE source = ? ORDER BY claimed_at, issue_id', [source]).map(
        claimOf,
      ),
  };
}

/** `?` parameters as PostgreSQL's `$1, $2 …` (the statements above have no `?` in literals). */
export function numberedParameters(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
