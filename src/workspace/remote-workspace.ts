import { join } from 'node:path';
import type { MergeLock } from '../core/merge-lock.js';
import type { TaskWorkspace } from '../core/task-workspace.js';
import { gitOk, resolveCommit } from './git.js';
import { mergeIntoRemoteBase } from './remote-merge.js';
import {
  catchUp,
  fetchRemote,
  locateRemote,
  publishAsLogged,
  pushBranch,
  type RemoteRepo,
  tracking,
} from './remote-repo.js';
import { gitWorkspace } from './task-workspace.js';
import { defaultBase, fanOutName, taskBranch } from './task-worktree.js';

export interface RemoteWorkspaceOptions {
  /** This machine's project directory (where `.troupe/` is): a checkout of the remote, or not. */
  root: string;
  /** Serializes merges into a base (the local file lock, or PostgreSQL's advisory lock). */
  mergeLock: MergeLock;
  /** Where clones of a remote given by URL are kept; default `<root>/.troupe/remotes/`. */
  cacheDir?: string;
}

/**
 * The TaskWorkspace for `workspace: {remote: …}` (docs/workspaces.md, "Worktrees across
 * machines"); without `remote` it is the local git workspace, unchanged. Before a stage the
 * task's branches are fetched and this machine's worktree is put at what was pushed; after each
 * stage's commit (and each join) the branch is pushed, so the next stage may run on any worker.
 * A run always prepares its worktrees before it commits in them, so a task without a remote costs
 * no git call more than before.
 * Merges into base take the merge lock and are pushed without force (remote-merge.ts).
 */
export function remoteWorkspace(options: RemoteWorkspaceOptions): TaskWorkspace {
  const local = gitWorkspace;
  const cacheDir = options.cacheDir ?? join(options.root, '.troupe', 'remotes');
  const located = new Map<string, Promise<RemoteRepo>>();
  const locate = async (spec: string): Promise<RemoteRepo> => {
    let at = located.get(spec);
    if (!at) {
      at = locateRemote(options.root, spec, cacheDir);
      located.set(spec, at);
      at.catch(() => located.delete(spec));
    }
    const found = await at;
    await fetchRemote(found);
    return found;
  };

  /** The worktrees this process made ready for a remote task, and the branch each one pushes. */
  const published = new Map<string, RemoteRepo & { branch: string }>();

  return {
    repoOf: local.repoOf,
    verifyAt: local.verifyAt,
    keepCheckoutsReady: local.keepCheckoutsReady,
    releaseCheckouts: local.releaseCheckouts,
    changedFiles: local.changedFiles,
    showFiles: local.showFiles,
    tidy: local.tidy,

    async prepare(taskId, cwd, settings) {
      // the recorded directory is the machine's that started the task: here it is this one's
      if (!settings.remote) return local.prepare(taskId, cwd, settings);
      const at = await locate(settings.remote);
      const base = settings.base ?? (await defaultBase(at.repo));
      const branch = taskBranch(taskId, settings.branch_prefix);
      await catchUp(at, branch, (await resolveCommit(at.repo, tracking(at, base))) ?? base);
      const ready = await local.prepare(taskId, at.repo, { ...settings, base });
      published.set(ready.path, { ...at, branch });
      // not pushed yet: the branch's start is, so any worker starts from the same commit
      if (!(await resolveCommit(at.repo, tracking(at, branch)))) await pushBranch(at, branch);
      return ready;
    },

    commit: local.commit,

    async advance(path, commit) {
      await local.advance(path, commit);
      const at = published.get(path);
      if (at) await pushBranch(at, at.branch);
    },

    async align(path, taskId, expected, base) {
      const at = published.get(path);
      if (!at) return local.align(path, taskId, expected, base);
      const fork = (await resolveCommit(path, tracking(at, base))) ? tracking(at, base) : base;
      const target = expected ?? (await gitOk(path, ['merge-base', 'HEAD', fork])).trim();
      await local.align(path, taskId, target, base);
      await publishAsLogged(at, at.branch, taskId);
    },

    async merge(repo, taskId, settings, base, recorded) {
      if (!settings.remote) return local.merge(repo, taskId, settings, base, recorded);
      // the remote's task branch is pushed only after a stage's events are stored (advance), and
      // without force: it holds recorded commits only
      const at = await locate(settings.remote);
      const url = (await gitOk(at.repo, ['remote', 'get-url', at.remote])).trim();
      const branch = taskBranch(taskId, settings.branch_prefix);
      return options.mergeLock.withMergeLock(`${url} ${base}`, () =>
        mergeIntoRemoteBase(at, taskId, branch, base),
      );
    },

    async prepareBranch(repo, taskId, agent, settings, expected, start) {
      if (!settings.remote) return local.prepareBranch(repo, taskId, agent, settings, expected, start);
      const at = await locate(settings.remote);
      const name = fanOutName(taskId, agent);
      const branch = `${settings.branch_prefix}${name}`;
      await catchUp(at, taskBranch(taskId, settings.branch_prefix), null);
      await catchUp(at, branch, null);
      const ready = await local.prepareBranch(at.repo, taskId, agent, settings, expected, start);
      published.set(ready.path, { ...at, branch });
      await publishAsLogged(at, branch, name);
      return ready;
    },

    async mergeBranches(path, branches, leftoverMessage) {
      const at = published.get(path);
      if (at) {
        await fetchRemote(at);
        for (const branch of branches) await catchUp(at, branch, null);
      }
      // pushed by `advance`, once the join is recorded
      return local.mergeBranches(path, branches, leftoverMessage);
    },
  };
}
