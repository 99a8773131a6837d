import { describe, expect, it } from 'vitest';
import { sh, tmpRepo, writeFiles } from './support/git-repo.js';
import { eventLog, project, troupe, troupeJson } from './support/troupe.js';

const pipeline = `workspace: {isolation: worktree, merge: manual}
agents:
  - id: dev
    runtime: claude
    gate:
      type: command
      verifier: qa
      command: "test -f src/health.ts && test ! -f secret.env"
    handoffs: [{to: docs, condition: on_approve}]
  - id: docs
    runtime: claude
  - id: qa
    runtime: gemini
`;
const script = `agents:
  dev:
    - reply: "added health"
      write: {src/health.ts: "export const ok = true;\\n", secret.env: "TOKEN=1\\n"}
  docs:
    - reply: "documented"
      write: {docs/health.md: "GET /health\\n"}
`;

async function repoWith(files: Record<string, string>) {
  const repo = await tmpRepo({ 'README.md': 'hi\n', '.gitignore': 'secret.env\n' });
  writeFiles(repo, files);
  await sh(repo, 'add', '-A');
  await sh(repo, 'commit', '-qm', 'pipeline');
  return repo;
}

describe('worker != tester', () => {
  it('the verifier judges a fresh checkout of the worker’s commit, and the last commit is verified before completion', async () => {
    const repo = await repoWith({ '.troupe/pipelines/default.yaml': pipeline, 'script.yaml': script });
    const { code, json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    // the ignored secret.env is in the worker's directory, not in its commit: the check passed
    expect(json.stages[0]!.gate).toMatchObject({ decision: 'approved', by: 'command' });
    const log = eventLog(repo, json.id);
    const commits = log.filter((e) => e.type === 'workspace_committed').map((e) => e.data.sha);
    const verified = log
      .filter((e) => e.type === 'verified')
      .map((e) => [e.data.sha, e.data.verifier, e.data.decision]);
    expect(verified).toEqual([
      [commits[0], 'qa', 'approved'],
      [commits[1], 'qa', 'approved'],
    ]);
  });

  it('validate refuses a verifier that is the worker itself, or does not exist', async () => {
    const dir = project({
      'self.yaml': 'agents:\n  - id: dev\n    runtime: claude\n    gate: {type: llm, verifier: dev}\n',
      'none.yaml':
        'agents:\n  - id: dev\n    runtime: claude\n    gate: {type: llm, verifier: qaa}\n  - id: qa\n    runtime: gemini\n',
    });
    const self = await troupe(dir, ['validate', 'self.yaml']);
    expect(self.code).toBe(2);
    expect(self.stdout).toContain('`dev` cannot verify its own work');
    const none = await troupe(dir, ['validate', 'none.yaml']);
    expect(none.stdout).toContain('verifier `qaa` does not exist');
  });
});
