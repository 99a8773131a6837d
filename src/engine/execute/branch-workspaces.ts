import { TroupeError } from '../../core/errors.js';
import type { ConflictSide, TaskEvent } from '../../core/events.js';
import { findNode } from '../../core/pipeline.js';
import { pieceBranchName } from '../../core/plan.js';
import type { StageCommit, TaskWorkspace } from '../../core/task-workspace.js';
import {
  branchLineage,
  type PieceState,
  pieceOf,
  type TaskState,
  workspaceSettings,
} from '../fold/task-state.js';
import type { StepOf } from '../plan/plan.js';

/**
 * Fan-out branches in worktrees of their own (docs/workspaces.md). In a task with
 * `workspace: {isolation: worktree}`, each lineage of a top-level fan-out works on
 * `troupe/<task>--<agent>` (the agent the fan-out handed to), started from the task branch; a join
 * merges its branches into its own worktree before it runs. Nested fan-outs share their enclosing
 * branch's worktree. The planner decides when (merge_branches steps); this does the git part
 * through the workspace port and says what to record.
 */

/** Where a stage works: a directory, and the fan-out branch it commits on (null: the task's own). */
export interface Workplace {
  cwd: string;
  branch: string | null;
}

/** Two branches of one task that are still open would share a worktree. */
export class BranchInUseError extends TroupeError {
  readonly code = 'branch_in_use';
  constructor(branch: string) {
    super(`fan-out branch ${branch} is still in use by another branch of this task`, {
      hint: 'a fan-out names each agent once; a later fan-out to it waits until the earlier branch is joined',
    });
  }
}

export interface MergeOutcome {
  events: TaskEvent[];
  /** A conflict with no `on_conflict` agent: what to ask a person. */
  ask: { activation: string; agent: string; questions: string[] } | null;
  /** The join's commits, to put on the worktree's branch once `events` are stored (null: none). */
  advance: { path: string; commit: StageCommit } | null;
}

/** How much of a conflict a resolver is shown in its input: the first files, each cut. */
const MAX_SIDE_FILES = 5;
const MAX_SIDE_BYTES = 8 * 1024;

export class BranchWorkspaces {
  /** The queue a branch worktree is made ready in (before its path is known to the log). */
  static prepareKey(agent: string): string {
    return `branch:${agent}`;
  }

  /** Lineages whose worktree this process has made ready (created, or reused and aligned). */
  private readonly ready = new Map<string, Promise<Workplace>>();

  constructor(
    private readonly taskId: string,
    private readonly port: TaskWorkspace,
    private readonly state: () => TaskState,
    /** Runs git work one operation at a time per worktree (`key`: its path or branch name). */
    private readonly serial: <T>(key: string, work: () => Promise<T>) => Promise<T>,
  ) {}

  /**
   * Where an activation's stage works. The first stage of a fan-out lineage gets its worktree
   * (and the `branch_workspace_ready` event to record); a resumed run reuses the one the log
   * knows, put back at the branch's last recorded commit.
   */
  async workplaceFor(activationId: string): Promise<{ place: Workplace; events: TaskEvent[] }> {
    const state = this.state();
    const workspace = state.workspace;
    if (!workspace) return { place: { cwd: state.cwd, branch: null }, events: [] };
    const activation = state.activations.get(activationId)!;
    const lineage = branchLineage(state, activation);
    if (lineage === null) return { place: { cwd: workspace.path, branch: null }, events: [] };
    const piece = pieceOf(state, activation);
    return piece?.lineage === lineage ? this.pieceWorkplace(piece) : this.lineage(lineage, activation.agent);
  }

  /** A plan's pieces share their worker: each piece's worktree is named after the piece. */
  pieceWorkplace(piece: PieceState): Promise<{ place: Workplace; events: TaskEvent[] }> {
    return this.lineage(piece.lineage, pieceBranchName(piece.id));
  }

  private async lineage(lineage: string, agent: string): Promise<{ place: Workplace; events: TaskEvent[] }> {
    const known = this.ready.get(lineage);
    if (known) return { place: await known, events: [] };
    const state = this.state();
    const recorded = state.branchWorkspaces.get(lineage);
    const name = recorded?.agent ?? agent;
    if (!recorded) {
      const taken = [...state.branchWorkspaces.values()].find(
        (b) => b.agent === name && !b.merged && !b.resolved,
      );
      if (taken) throw new BranchInUseError(taken.branch);
    }
    const workspace = state.workspace!;
    const settings = workspaceSettings(state)!;
    // a new branch starts at the task branch's last commit in the log, whether or not git has
    // it on the branch yet (a join's merge may still be going onto it)
    const prepared = this.serial(BranchWorkspaces.prepareKey(name), () =>
      this.port.prepareBranch(
        workspace.repo,
        this.taskId,
        name,
        settings,
        recorded?.head ?? null,
        workspace.head ?? null,
      ),
    );
    const place = prepared.then((p) => ({ cwd: p.path, branch: p.branch }));
    // its failure is handled below (the task fails); unawaited, it must not end the process
    place.catch(() => {});
    this.ready.set(lineage, place);
    try {
      const p = await prepared;
      const events: TaskEvent[] = recorded
        ? []
        : [
            {
              type: 'branch_workspace_ready',
              lineage,
              agent: name,
              path: p.path,
              branch: p.branch,
              start: p.start,
            },
          ];
      return { place: { cwd: p.path, branch: p.branch }, events };
    } catch (error) {
      this.ready.delete(lineage);
      throw error;
    }
  }

  /** Both sides of the first conflicting files, for the resolver's input (a courtesy: git may refuse). */
  private async sides(path: string, head: string, branch: string, files: string[]): Promise<ConflictSide[]> {
    const shown = files.slice(0, MAX_SIDE_FILES);
    try {
      const [ours, theirs] = await this.serial(path, () =>
        Promise.all([
          this.port.showFiles(path, head, shown, MAX_SIDE_BYTES),
          this.port.showFiles(path, branch, shown, MAX_SIDE_BYTES),
        ]),
      );
      return shown.map((file) => ({ file, ours: ours[file] ?? null, theirs: theirs[file] ?? null }));
    } catch {
      return [];
    }
  }

  /** Merges a join's branches (or, at the end, every branch no join collected) into its worktree. */
  async merge(step: StepOf<'merge_branches'>): Promise<MergeOutcome> {
    const state = this.state();
    const events: TaskEvent[] = [];
    let path = state.workspace!.path;
    let intoBranch = state.workspace!.branch;
    if (step.into !== null) {
      const target = state.branchWorkspaces.get(step.into)!;
      const ready = await this.lineage(step.into, target.agent);
      events.push(...ready.events);
      path = ready.place.cwd;
      intoBranch = target.branch;
    }
    // only a conflict resolved by hand leaves work uncommitted: every stage commits its own
    const leftover = step.resolved
      ? `troupe: ${this.taskId} ${step.agent ?? 'join'}: ${step.resolved} resolved by hand\n\nTroupe-Task: ${this.taskId}`
      : null;
    const result = await this.serial(path, () => this.port.mergeBranches(path, step.branches, leftover));
    const resolved = step.resolved ? { resolved: step.resolved } : {};
    const advance =
      result.head === result.from ? null : { path, commit: { sha: result.head, parent: result.from } };
    if (!('conflict' in result)) {
      events.push({
        type: 'branches_merged',
        activation: step.activation,
        into: step.into,
        branches: step.branches,
        ...resolved,
        head: result.head,
      });
      return { events, ask: null, advance };
    }
    const { branch, files, merged } = result.conflict;
    const node = step.agent ? findNode(state.definition, step.agent) : undefined;
    const resolver = step.activation ? (node?.on_conflict ?? null) : null;
    const sides = resolver ? await this.sides(path, result.head, branch, files) : [];
    events.push({
      type: 'branch_conflict',
      activation: step.activation,
      into: step.into,
      branch,
      files,
      merged,
      ...resolved,
      head: result.head,
      resolver,
      ...(sides.length ? { sides } : {}),
    });
    if (step.activation === null) {
      events.push({
        type: 'task_failed',
        reason: `merging fan-out branch ${branch} into ${intoBranch} conflicts in ${files.join(', ')}; the merge was aborted and the branch keeps its commits`,
        stage: null,
        errorKind: 'merge_conflict',
      });
      return { events, ask: null, advance };
    }
    if (resolver) return { events, ask: null, advance };
    return {
      events,
      advance,
      ask: {
        activation: step.activation,
        agent: step.agent!,
        questions: [
          [
            `Merging fan-out branch ${branch} into ${intoBranch} conflicts in: ${files.join(', ')}.`,
            'The merge was aborted: nothing was overwritten, and the branch keeps its commits.',
            `Resolve it in ${path} (for example \`git merge ${branch}\`, fix the files, commit; or apply the change by hand),`,
            `then answer to continue: troupe commits what you left there, merges the remaining branches and runs ${step.agent}.`,
          ].join('\n'),
        ],
      },
    };
  }
}
