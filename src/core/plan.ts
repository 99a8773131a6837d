import type { TaskSize } from './spec.js';

/**
 * A plan: the pieces a planner agent split a task into (docs/task-graphs.md). Each piece runs in
 * a worktree of its own once the pieces it depends on are merged into the task branch. The JSON
 * a planner writes is checked by `pipeline/lang/plan.ts` (schema/plan.schema.json).
 */
export interface PlanPiece {
  /** Lower-case letters, digits and dashes: it names the piece's branch (`<task>--piece-<id>`). */
  id: string;
  goal: string;
  /** The paths (files, or folders ending in `/`) the piece may write, relative to the repository. */
  paths: string[];
  depends_on: string[];
  size: TaskSize | null;
  labels: string[];
  /** Acceptance checks: shell commands that pass when the piece is done. */
  checks: string[];
}

/** A piece id: it goes into a branch name and a folder name. */
export const PIECE_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;

/** The most pieces one plan may have. */
export const MAX_PIECES = 200;

/** The name a piece's worktree and branch carry (`troupe/<task>--piece-<id>`). */
export function pieceBranchName(id: string): string {
  return `piece-${id}`;
}

/** A piece owning `paths` may write `file`: one of them is it, or a folder (ending in `/`) holding it. */
export function ownsPath(paths: readonly string[], file: string): boolean {
  return paths.some((p) => p === file || (p.endsWith('/') && file.startsWith(p)));
}
