import { git, gitOk, identityEnv } from './git.js';

/**
 * Commits everything the agent changed in a worktree (new, modified and deleted files; ignored
 * ones stay out) and returns the commit, or null when nothing changed. The user's commit hooks and
 * signing are skipped: these are troupe's bookkeeping commits, made with nobody at the keyboard.
 */
export async function commitStage(options: { path: string; message: string }): Promise<string | null> {
  const { path, message } = options;
  await gitOk(path, ['add', '--all']);
  const staged = await git(path, ['diff', '--cached', '--quiet']);
  if (staged.code === 0) return null;
  if (staged.code !== 1) await gitOk(path, ['diff', '--cached', '--quiet']);
  await gitOk(path, ['commit', '--quiet', '--no-verify', '--no-gpg-sign', '-m', message], {
    env: await identityEnv(path),
  });
  return (await gitOk(path, ['rev-parse', 'HEAD'])).trim();
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
