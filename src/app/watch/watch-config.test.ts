import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../core/errors.js';
import { defaultConfig } from '../../pipeline/config.js';
import { resolveWatchSetup } from './watch-config.js';

function dir(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'troupe-watch-config-'));
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

describe('resolveWatchSetup', () => {
  it("maps WORKFLOW.md's settings on the watch's", () => {
    const root = dir({
      'WORKFLOW.md': `---
tracker:
  kind: linear
  project_slug: abc123
  active_states: Todo, Doing
polling: {interval_ms: 1500}
agent:
  max_concurrent_agents: 3
  max_concurrent_agents_by_state: {Doing: 1}
  max_retry_backoff_ms: 60000
codex:
  stall_timeout_ms: 0
---
Work on {{ issue.identifier }}.
`,
    });
    const setup = resolveWatchSetup(root, defaultConfig(), 'WORKFLOW.md');
    expect(setup.config).toMatchObject({
      tracker: { kind: 'linear', project_slug: 'abc123' },
      active_states: ['Todo', 'Doing'],
      polling: { interval_ms: 1500 },
      concurrency: { max: 3, per_state: { doing: 1 } },
      max_retry_backoff_ms: 60_000,
      stall_timeout_ms: 0,
    });
    expect(setup.workflow?.pipeline.agents.map((a) => a.id)).toEqual(['codex']);
  });

  it('refuses a WORKFLOW.md whose tracker troupe does not read, in one line', () => {
    const root = dir({ 'WORKFLOW.md': '---\ntracker:\n  kind: memory\n---\nHi\n' });
    expect(() => resolveWatchSetup(root, defaultConfig(), 'WORKFLOW.md')).toThrow(UsageError);
    expect(() => resolveWatchSetup(root, defaultConfig(), 'WORKFLOW.md')).toThrow(/tracker.kind memory/);
  });

  it('takes tracker: from the config before a backlog folder; a bare backlog/ with no config at all', () => {
    const root = dir({ 'backlog/tasks/task-1 - A.md': '---\nid: task-1\n---\n' });
    expect(resolveWatchSetup(root, defaultConfig()).config.tracker).toEqual({ kind: 'backlog' });
    const config = {
      ...defaultConfig(),
      tracker: {
        ...resolveWatchSetup(root, defaultConfig()).config,
        tracker: { kind: 'github' as const, owner: 'a', repo: 'b' },
      },
    };
    expect(resolveWatchSetup(root, config).config.tracker).toEqual({ kind: 'github', owner: 'a', repo: 'b' });
    expect(() => resolveWatchSetup(dir({}), defaultConfig())).toThrow(/no tracker to watch/);
  });
});
