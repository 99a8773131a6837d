import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { git, gitOk, identityEnv } from './git.js';

/**
 * Commits everything the agent changed in a worktree (new, modified and deleted files; ignored
 * ones stay out) and returns the commit, or null when nothing changed. The user's commit hooks and
 * signing are skipped: these are troupe's bookkeeping commits, made with nobody at the keyboard.
 */
export async function commitStage(options: { path: string; message: string }): Promise<string | null> {
  const built = await buildCommit(options);
  if (!built) return null;
  await advanceBranch(options.path, built);
  return built.sha;
}

/** A commit made but not yet on its branch: `parent` is the branch's tip it was made on. */
export interface BuiltCommit {
  sha: string;
  parent: string;
}

/**
 * The commit of everything changed in the worktree, made on its HEAD without moving any ref, nor
 * the worktree's own index (the files are staged in a copy of it): until `advanceBranch`, the
 * commit is on no branch, so work that is never recorded leaves no trace there. Null when nothing
 * changed.
 */
export async function buildCommit(options: { path: string; message: string }): Promise<BuiltCommit | null> {
  return (await buildOnHead(options)).built;
}

/** `buildCommit`, and the HEAD it was built on (read once, for callers that check it too). */
export async function buildOnHead(options: {
  path: string;
  message: string;
}): Promise<{ head: string; built: BuiltCommit | null }> {
  const { path, message } = options;
  // one git process for what four would ask: the index's path, the repository's common dir,
  // HEAD's commit and its tree
  const asked = await git(path, [
    'rev-parse',
    '--path-format=absolute',
    '--git-path',
    'index',
    '--git-common-dir',
    'HEAD^{commit}',
    'HEAD^{tree}',
  ]);
  const [index, common, parent, parentTree] = asked.stdout.split('\n');
  if (asked.code !== 0 || !index || !common || !parent || !parentTree)
    throw new Error(`${path} has no commit to build on`);
  const identity = identityEnv(path, common);
  identity.catch(() => {}); // awaited only when there is a commit to make
  const real = isAbsolute(index) ? index : join(path, index);
  const scratch = `${real}.troupe-${randomBytes(4).toString('hex')}`;
  let kept = false;
  try {
    if (existsSync(real)) {
      copyFileSync(real, scratch);
      // with the index's own time: a file changed in the second the index was written stays
      // suspect to git (its "racy" check), not taken for unchanged by its size and time
      const { atime, mtime } = statSync(real);
      utimesSync(scratch, atime, mtime);
    }
    const env = { GIT_INDEX_FILE: scratch };
    await gitOk(path, ['add', '--all'], { env });
    const tree = (await gitOk(path, ['write-tree'], { env })).trim();
    if (tree === parentTree) return { head: parent, built: null };
    const sha = (
      await gitOk(path, ['commit-tree', '--no-gpg-sign', '-p', parent, '-m', message, tree], {
        env: await identity,
      })
    ).trim();
    keepIndex(path, { sha, scratch, real });
    kept = true;
    return { head: parent, built: { sha, parent } };
  } finally {
    if (!kept) rmSync(scratch, { force: true });
  }
}

/**
 * The staged index a commit was built from, per worktree (the last one built there): it is the
 * commit's tree with the worktree's files' stat data, so `advanceBranch` puts it in place of the
 * worktree's index instead of running `git reset --hard` to rebuild the same. One per worktree: a
 * commit never put on its branch leaves at most one file beside the index, which goes when the
 * next commit is built there (or with the worktree).
 */
const builtIndexes = new Map<string, { sha: string; scratch: string; real: string }>();

function keepIndex(path: string, built: { sha: string; scratch: string; real: string }): void {
  const before = builtIndexes.get(path);
  if (before) rmSync(before.scratch, { force: true });
  builtIndexes.set(path, built);
}

/**
 * Moves the worktree's branch from the commit's parent to the commit (compare-and-swap: a branch
 * that moved meanwhile is a GitError, nothing changed), then its index and files to the commit's:
 * a stage's commit holds every file of the worktree already, a join's merges bring the branches'
 * (the worktree holds nothing uncommitted then).
 */
export async function advanceBranch(path: string, commit: BuiltCommit): Promise<void> {
  await gitOk(path, ['update-ref', '-m', 'troupe: advance', 'HEAD', commit.sha, commit.parent]);
  const built = builtIndexes.get(path);
  if (built?.sha === commit.sha) {
    builtIndexes.delete(path);
    try {
      // a stage's commit holds the worktree's files as they are: only the index is behind
      renameSync(built.scratch, built.real);
      return;
    } catch {
      rmSync(built.scratch, { force: true });
    }
  }
  await gitOk(path, ['reset', '--hard', '--quiet']);
}

export interface StageCommitInfo {
  task: string;
  stage: number;
  agent: string;
  /** One line on what the stage did (e.g. the start of the agent's reply). */
  summary?: string;
}

/**
 * `troupe: T-1 stage 3 developer — <summary>` plus trailers, so a stage's commit can be found
 * again (`git log --grep='^Troupe-Stage: 3$'`) for `restart --from-stage`.
 */
export function stageCommitMessage(info: StageCommitInfo): string {
  const summary = info.summary?.split('\n')[0]?.trim().slice(0, 72);
  return [
    `troupe: ${info.task} stage ${info.stage} ${info.agent}${summary ? ` — ${summary}` : ''}`,
    '',
    `Troupe-Task: ${info.task}`,
    `Troupe-Stage: ${info.stage}`,
    `Troupe-Agent: ${info.agent}`,
  ].join('\n');
}
