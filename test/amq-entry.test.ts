import { execFileSync, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { type LiveProject, liveProject } from './support/live.js';
import { bin } from './support/troupe.js';

// `troupe amq …`: the AMQ README's own lines, pasted unchanged into a shell where `amq` is
// `troupe amq` (a function, as an alias would be), run against the built CLI.

let project: LiveProject | undefined;
afterEach(() => project?.close());

function bash(p: LiveProject, script: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('bash', ['-c', `set -o pipefail\namq() { node ${bin} amq "$@"; }\n${script}`], {
    cwd: p.dir,
    env: { ...process.env, ...p.env },
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('troupe amq runs the AMQ README unchanged', () => {
  it("quick start: setup's automation snippet, pinning a shell, send / list / drain / receipts / reply, doctor, wake check", async () => {
    project = await liveProject();
    const p = project;
    const setup = bash(
      p,
      `setup_args=(--agents claude,codex --default-session collab --launcher-preference commands)
setup_preview="$(amq setup --preview --json "\${setup_args[@]}")"
setup_digest="$(printf '%s\\n' "$setup_preview" | jq -r '.preview.digest')"
amq setup --apply "$setup_digest" "\${setup_args[@]}"`,
    );
    expect(setup.code, setup.stderr).toBe(0);
    // a stale digest is refused with AMQ's 6
    expect(bash(p, 'amq setup --apply sha256:0000 --agents claude,codex --default-session collab').code).toBe(
      6,
    );

    const mail = bash(
      p,
      `amq_context="$(amq env --session collab --me claude --export)" && eval "$amq_context"
amq send --to codex --subject "Review needed" --kind review_request \\
  --body "Please review internal/cli/send.go"
AM_ME=codex amq list --new
AM_ME=codex amq list --new --from claude --kind review_request
AM_ME=codex amq drain --include-body
amq receipts list --me codex --msg-id "$(AM_ME=codex amq list --cur --json | jq -r '.[0].id')" --json | jq -r '.[0].stage'
AM_ME=codex amq reply --id "$(AM_ME=codex amq list --cur --json | jq -r '.[0].id')" --kind review_response --body "LGTM with comments"
amq list --new --json | jq -r '.[0].subject'`,
    );
    expect(mail.code, mail.stderr).toBe(0);
    expect(mail.stderr).toMatch(/pinned to .*collab \(session collab\)/);
    const lines = mail.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^sent \S+ to codex \(thread p2p\/claude__codex\)$/);
    expect(mail.stdout).toContain('Please review internal/cli/send.go');
    expect(lines).toContain('drained');
    expect(lines.at(-1)).toBe('Re: Review needed');

    const health = bash(
      p,
      `amq doctor
amq doctor --ops --json | jq -r '.ops.wakes.running'
amq wake check --me codex --session collab --json --json-schema=2 | jq -r '.wake.status + " " + .restart_capability'
amq doctor --ops --fix-wake-locks --json | jq -c '.ops.fixed_wake_locks'`,
    );
    expect(health.code, health.stderr).toBe(0);
    expect(health.stdout).toMatch(/\[ok\] root_config/);
    expect(health.stdout.trim().split('\n').slice(-3)).toEqual(['0', 'missing operator_only', '[]']);
  }, 60_000);

  it('AMQ commands troupe lacks, and words that are not AMQ commands, are one line and exit 2', async () => {
    project = await liveProject();
    for (const [words, pattern] of [
      [['coop', 'join'], /^troupe: amq coop is not in troupe: `amq coop init` is `troupe bus coop init`/],
      [['frobnicate'], /^troupe: 'frobnicate' is not an AMQ command troupe knows/],
    ] as const) {
      const r = spawnSync('node', [bin, 'amq', ...words], { cwd: project.dir, encoding: 'utf8' });
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(pattern);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(execFileSync('node', [bin, 'amq', '--help'], { encoding: 'utf8' })).toMatch(
      /^Usage: troupe amq <amq command>/,
    );
  });
});
