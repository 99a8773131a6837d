import { LeaseLostError, messageOf } from '../../core/errors.js';
import type { EventOf, TaskEvent } from '../../core/events.js';
import { ownsPath } from '../../core/plan.js';
import type { StageCommit, TaskWorkspace } from '../../core/task-workspace.js';
import { defaultIsolation, editingAgents } from '../../pipeline/isolation.js';
import { pieceOfActivation, workspaceSettings } from '../fold/task-state.js';
import { checkoutsAhead } from '../plan/graph-plan.js';
import type { StepOf } from '../plan/plan.js';
import { BranchWorkspaces, type Workplace } from './branch-workspaces.js';
import type { EventBatch } from './event-batch.js';

/**
 * A run's git work, through the workspace port: the task's worktree before its first stage, where
 * each stage works, a commit per stage, the join's merge of fan-out branches, and the merge into
 * base at the end. One git operation at a time: worktrees of one repository share its refs and
 * locks. Without a port (or a worktree) every stage works in the task's directory.
 *
 * Fencing (docs/distributed.md): git work that changes the task's branches starts only while the
 * run still holds the task's lease (`fence`, asked before each operation), and a stage's commit
 * is put on its branch only after its events are stored under that lease (`commitWorktree`, then
 * `advance`; a join's merges likewise), so an attempt the store refused leaves no trace on the
 * task's branches.
 */
export class RunWorkspace {
  /** Git work waiting or running, per worktree (the key): one operation at a time in each. */
  private readonly gitQueues = new Map<string, Promise<void>>();
  /** A join's merges going onto its branch: a stage (its resolver's) starts only once they are there. */
  private joinAdvance: Promise<void> | null = null;
  private readonly branches: BranchWorkspaces | null;
  /** The checkouts asked to be made ahead, last told to the port. */
  private ahead = 0;

  constructor(
    private readonly taskId: string,
    private readonly port: TaskWorkspace | undefined,
    private readonly events: EventBatch,
    /** Throws LeaseLostError when another process holds the task now: no git work from here. */
    private readonly fence: () => void = () => {},
  ) {
    this.branches = port
      ? new BranchWorkspaces(
          taskId,
          port,
          () => events.state,
          (key, work) => this.serialGit(key, work),
        )
      : null;
  }

  /**
   * `workspace: {isolation: worktree}`, or by default when an agent edits code and the task is in
   * a git repository: the task gets its own worktree and branch before its first stage; a resumed
   * task finds and reuses the one it had.
   */
  async prepare(): Promise<void> {
    const port = this.port;
    if (!port) return;
    const state = this.events.state;
    const known = state.workspace;
    try {
      // decided once, before the first stage (a task that already ran in place stays there), and
      // only asked of git when an agent edits code: the rest run in place, as they always have
      const { definition } = state;
      if (
        !definition.workspace &&
        !state.isolation &&
        state.stages.length === 0 &&
        editingAgents(definition).length > 0
      ) {
        const inRepo = (await port.repoOf(state.cwd)) !== null;
        this.events.record([{ type: 'isolation_chosen', ...defaultIsolation(definition, inRepo) }]);
      }
      const settings = workspaceSettings(state);
      if (settings?.isolation === 'worktree') {
        const ready = await port.prepare(this.taskId, known?.repo ?? state.cwd, settings);
        // with `workspace: {remote}` a later run may be on another machine, its worktree elsewhere
        const moved = known && (ready.path !== known.path || ready.repo !== known.repo);
        if (!known || moved) this.events.record([{ type: 'workspace_ready', ...ready }]);
        // a person's resolution of a merge conflict, left in the worktree, is the join's to commit
        if (known && !this.takesResolution())
          await port.align(ready.path, this.taskId, known.head ?? null, known.base);
      }
    } catch (error) {
      this.events.failTask('workspace', error);
    }
    this.events.flush();
  }

  /**
   * Where a stage works: the task's directory, its worktree, or its fan-out branch's worktree
   * (made ready first; recorded). Null when that failed, and the task with it. A promise only
   * when there is git work to wait for.
   */
  workplace(activation: string): Workplace | Promise<Workplace | null> {
    const state = this.events.state;
    // a piece works in its own worktree, started from the log's last commit: a merge going onto
    // the task branch is nothing it waits for
    if (this.joinAdvance && !pieceOfActivation(state, activation))
      return this.joinAdvance.then(() => this.workplace(activation));
    if (!this.branches || !state.workspace) return { cwd: state.cwd, branch: null };
    return this.branchWorkplace(this.branches, activation);
  }

  /**
   * A piece's worktree, made and recorded before its worker's first stage (graph-plan.ts
   * `prepare_piece`: ahead of its start, while every place is taken, or once it started).
   */
  async preparePiece(pieceId: string): Promise<void> {
    const state = this.events.state;
    const piece = state.plan?.pieces.get(pieceId);
    if (!piece || !state.workspace || state.branchWorkspaces.has(piece.lineage)) return;
    try {
      if (!this.branches) throw new Error(`no git here to make piece ${pieceId}'s worktree`);
      const { events } = await this.branches.pieceWorkplace(piece);
      this.events.record(events);
    } catch (error) {
      this.events.failTask('workspace', error);
    }
  }

  /**
   * The commit of what a stage changed in its worktree, made without moving its branch (null:
   * nothing to commit, no worktree). Record it, flush, then `advance`.
   */
  commitWorktree(stage: number, agent: string, place: Workplace): Promise<StageCommit | null> {
    const port = this.port;
    if (!this.events.state.workspace || !port) return Promise.resolve(null);
    const recorded = this.recordedHead(place);
    return this.serialGit(place.cwd, () =>
      port.commit(place.cwd, { task: this.taskId, stage, agent }, recorded),
    );
  }

  /** The stage's commit goes on its branch: only once its events are in the store. */
  advance(place: Workplace, commit: StageCommit): Promise<void> {
    return this.serialGit(place.cwd, () => this.port!.advance(place.cwd, commit));
  }

  /** A plan's checkouts made ahead (graph-plan.ts `checkoutsAhead`): the port is told when the number changes. */
  keepCheckoutsAhead(): void {
    const workspace = this.events.state.workspace;
    if (!this.port || !workspace) return;
    const count = checkoutsAhead(this.events.state);
    if (count === this.ahead) return;
    this.ahead = count;
    this.port.keepCheckoutsReady(workspace.repo, this.taskId, workspace.branch, count);
  }

  /** The run is over: what it kept for reuse (verifier checkouts) goes, once its git work is done. */
  async close(): Promise<void> {
    const workspace = this.events.state.workspace;
    if (!this.port || !workspace) return;
    await this.idle();
    await this.port.releaseCheckouts(workspace.repo, this.taskId).catch(() => {});
  }

  /** Resolves when the git work asked for so far, in every worktree, is done. */
  async idle(): Promise<void> {
    await Promise.all(this.gitQueues.values());
  }

  /**
   * Resolves when the git work asked for so far on these branches' worktrees is done: a join
   * waits for the commits still going onto the branches it merges, not for other pieces' work.
   */
  private async idleBranches(branches: readonly string[]): Promise<void> {
    const worktrees = [...this.events.state.branchWorkspaces.values()].filter((b) =>
      branches.includes(b.branch),
    );
    const keys = worktrees.flatMap((b) => [b.path, BranchWorkspaces.prepareKey(b.agent)]);
    await Promise.all(keys.map((key) => this.gitQueues.get(key)));
  }

  /**
   * A join's branches go into its worktree first. A conflict goes to the join's `on_conflict`
   * agent, or is a question for a person: returned, for the executor to ask.
   */
  async mergeBranches(
    step: StepOf<'merge_branches'>,
    /** Events read beside the merge, recorded before it (a plan's pieces' paths). */
    before: Promise<TaskEvent[]> = Promise.resolve([]),
  ): Promise<StepOf<'ask_human'> | null> {
    this.events.flush();
    // the branches' last commits may still be going onto them (in their own worktrees' queues)
    await this.idleBranches(step.branches);
    let outcome: Awaited<ReturnType<BranchWorkspaces['merge']>>;
    let first: TaskEvent[];
    try {
      [first, outcome] = await Promise.all([before, this.branches!.merge(step)]);
    } catch (error) {
      this.events.failTask('workspace', error);
      return null;
    }
    this.events.record([...first, ...outcome.events]);
    const advance = outcome.advance;
    if (advance) {
      // like a stage's commit: on the branch only once the join is stored under the lease
      this.events.flush();
      const moved = this.serialGit(advance.path, () => this.port!.advance(advance.path, advance.commit));
      const settled = moved.then(
        () => {},
        () => {},
      );
      this.joinAdvance = settled;
      void settled.then(() => {
        if (this.joinAdvance === settled) this.joinAdvance = null;
      });
      await moved;
    }
    return outcome.ask ? { kind: 'ask_human', stage: null, mode: 'merge_conflict', ...outcome.ask } : null;
  }

  /** The files a piece's branch changed outside the paths it owns (none without git, or once recorded). */
  async outsidePaths(pieceId: string): Promise<string[]> {
    const state = this.events.state;
    const piece = state.plan?.pieces.get(pieceId);
    const ws = piece && state.branchWorkspaces.get(piece.lineage);
    const port = this.port;
    if (!piece || !ws || !port || piece.outside.length > 0) return [];
    const changed = await this.serialGit(ws.path, () => port.changedFiles(ws.path, ws.start, ws.head));
    return changed.filter((file) => !ownsPath(piece.paths, file));
  }

  /** `merge: on_complete` and the task branch is not in base yet. */
  needsMerge(): boolean {
    const state = this.events.state;
    const workspace = state.workspace;
    return Boolean(
      this.port && workspace && !workspace.merged && workspaceSettings(state)?.merge === 'on_complete',
    );
  }

  /** merge: on_complete — the task branch goes into base before the task is completed. */
  async mergeAndComplete(): Promise<void> {
    const state = this.events.state;
    const workspace = state.workspace!;
    const settings = workspaceSettings(state)!;
    await this.idle();
    // the work is done and committed on the task branch whatever happens here: a merge that
    // cannot be made is reported and left for `troupe merge`, never a task stuck running
    let merge: EventOf<'workspace_merged' | 'workspace_conflict' | 'workspace_merge_failed'>;
    try {
      this.fence();
      const recorded = workspace.head ?? null;
      const result = await this.port!.merge(workspace.repo, this.taskId, settings, workspace.base, recorded);
      const stray = result.stray ? { stray: result.stray } : {};
      merge =
        'conflict' in result
          ? { type: 'workspace_conflict', into: workspace.base, files: result.conflict, ...stray }
          : { type: 'workspace_merged', into: workspace.base, how: result.merged, sha: result.sha, ...stray };
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
      merge = { type: 'workspace_merge_failed', into: workspace.base, reason: messageOf(error) };
    }
    this.events.record([merge, ...(await this.tidy(merge)), { type: 'task_completed' }]);
  }

  /**
   * Once merged, the task's worktrees and branches hold nothing base lacks: they go, so runs do
   * not pile them up (unmerged work is never removed). Failing to remove them fails nothing:
   * `troupe worktrees prune` finds them later.
   */
  private async tidy(merge: EventOf<'workspace_merged' | 'workspace_conflict' | 'workspace_merge_failed'>) {
    if (merge.type !== 'workspace_merged') return [];
    const repo = this.events.state.workspace!.repo;
    try {
      this.fence();
      const removed = await this.port!.tidy(repo, this.taskId);
      return removed.length > 0 ? [{ type: 'workspace_removed' as const, removed }] : [];
    } catch (error) {
      if (error instanceof LeaseLostError) throw error;
      return [];
    }
  }

  private async branchWorkplace(branches: BranchWorkspaces, activation: string): Promise<Workplace | null> {
    try {
      const { place, events } = await branches.workplaceFor(activation);
      if (events.length > 0) this.events.record(events);
      return place;
    } catch (error) {
      this.events.failTask('workspace', error);
      return null;
    }
  }

  private takesResolution(): boolean {
    return [...this.events.state.activations.values()].some(
      (a) => a.status !== 'done' && a.conflict?.handled && a.conflict.resolver === null,
    );
  }

  /** The last commit the log knows on the branch a stage commits on. */
  private recordedHead(place: Workplace): string | null {
    const state = this.events.state;
    if (place.branch === null) return state.workspace?.head ?? null;
    return [...state.branchWorkspaces.values()].find((b) => b.branch === place.branch)?.head ?? null;
  }

  /**
   * Git work one operation at a time in each worktree (`key`), each started only while the task's
   * lease is still held. Worktrees of one repository work side by side: each has its own index
   * and branch, and git locks the refs they share (making a worktree takes turns per repository
   * in workspace/). What reads other worktrees' branches (a merge) waits for their queues first.
   */
  private serialGit<T>(key: string, work: () => Promise<T>): Promise<T> {
    const before = this.gitQueues.get(key) ?? Promise.resolve();
    const next = before.then(() => {
      this.fence();
      return work();
    });
    const settled = next.then(
      () => {},
      () => {},
    );
    this.gitQueues.set(key, settled);
    void settled.then(() => {
      if (this.gitQueues.get(key) === settled) this.gitQueues.delete(key);
    });
    return next;
  }
}
