import { afterEach, describe, expect, it } from 'vitest';
import { type LinearMock, startLinearMock } from './fixtures/linear-api/server.js';
import { tmpRepo } from './support/git-repo.js';
import { troupe } from './support/troupe.js';

/** `troupe watch --workflow WORKFLOW.md`: Symphony's file read unchanged, against the Linear mock. */

let mock: LinearMock;
afterEach(async () => mock?.close());

const workflow = (m: LinearMock) => `---
tracker:
  kind: linear
  project_slug: ${m.projectSlug}
  endpoint: ${m.url}
  api_key: $MY_LINEAR_KEY
polling:
  interval_ms: 5000
agent:
  max_concurrent_agents: 1
  # one task per issue here: continuation turns are watch-turns.test.ts's
  max_turns: 1
codex:
  command: codex app-server
---
You are working on {{ issue.identifier }}: {{ issue.title }}.
{% if attempt %}Attempt {{ attempt }}.{% endif %}
{{ issue.description }}
`;

describe('troupe watch --workflow WORKFLOW.md (Linear mock)', { timeout: 90_000 }, () => {
  it("dry run: Symphony's order and concurrency; --once runs the rendered prompt once, the key from api_key's variable", async () => {
    mock = await startLinearMock();
    mock.addIssue({ title: 'Fix login', priority: 3, description: '{{ not a template }} $(rm -rf ~)' });
    mock.addIssue({ title: 'Urgent thing', priority: 1 });
    // a workflow's pipeline works in a worktree per issue: the project is a git repository
    const dir = await tmpRepo({
      'WORKFLOW.md': workflow(mock),
      'script.yaml': 'agents:\n  codex:\n    - "Done."\n',
    });
    const env = { MY_LINEAR_KEY: mock.apiKey };
    const dry = await troupe(
      dir,
      ['watch', '--workflow', 'WORKFLOW.md', '--once', '--dry-run', '--json'],
      env,
    );
    expect(dry.stderr).toBe('');
    const poll = JSON.parse(dry.stdout);
    expect(poll.start.map((s: { identifier: string }) => s.identifier)).toEqual(['ENG-2']);
    expect(poll.skipped).toEqual([
      { id: expect.any(String), identifier: 'ENG-1', reason: 'concurrency: 1 of 1 running' },
    ]);

    const once = await troupe(
      dir,
      ['watch', '--workflow', 'WORKFLOW.md', '--once', '--script', 'script.yaml'],
      env,
    );
    expect(once.code).toBe(0);
    expect(once.stdout).toMatch(/^started T-[0-9A-F]{6} {2}ENG-2 /m);
    const list = JSON.parse((await troupe(dir, ['list', '--json'])).stdout);
    expect(list).toMatchObject([{ status: 'completed' }]);
    expect(list[0].input.trim()).toBe('You are working on ENG-2: Urgent thing.');
    // the issue is claimed (assigned to the key's user) and has its one progress comment
    const urgent = [...mock.issues.values()].find((i) => i.identifier === 'ENG-2')!;
    expect(urgent.assigneeId).toBe(mock.viewerId);
    expect(urgent.comments).toHaveLength(1);

    const next = await troupe(
      dir,
      ['watch', '--workflow', 'WORKFLOW.md', '--once', '--script', 'script.yaml', '--json'],
      env,
    );
    const second = JSON.parse(next.stdout);
    expect(second.start.map((s: { identifier: string }) => s.identifier)).toEqual(['ENG-1']);
    const tasks = JSON.parse((await troupe(dir, ['list', '--json'])).stdout);
    expect(tasks).toHaveLength(2);
    // issue text is data: put in the prompt as written, never rendered
    expect(tasks[0].input).toContain('{{ not a template }} $(rm -rf ~)');
  });
});
