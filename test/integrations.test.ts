import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, repoRoot, troupe } from './support/troupe.js';

interface Listed {
  from: string;
  to: string[];
  thread: string;
  subject: string;
  kind: string;
  priority: string;
  labels?: string[];
  context?: { orchestrator?: Record<string, unknown> };
}

const inbox = async (dir: string, me: string): Promise<Listed[]> =>
  JSON.parse(
    (await troupe(dir, ['bus', 'list', '--me', me, '--root', '.agent-mail', '--json'])).stdout,
  ) as Listed[];

describe('troupe bus integration: orchestrator events as AMQ integration messages', () => {
  it('symphony emit, run as a workspace hook, mails the agent itself with context.orchestrator', async () => {
    const dir = project({ 'workspaces/ABC-123/README.md': 'issue workspace\n' });
    await troupe(dir, ['bus', 'init', '--root', '.agent-mail', '--agents', 'codex']);
    const workspace = join(dir, 'workspaces', 'ABC-123');
    const hook = await troupe(workspace, [
      'bus',
      'integration',
      'symphony',
      'emit',
      '--event',
      'after_run',
      '--me',
      'codex',
      '--root',
      join(dir, '.agent-mail'),
      '--json',
    ]);
    expect(hook.code).toBe(0);
    expect(JSON.parse(hook.stdout)).toMatchObject({
      event: 'after_run',
      me: 'codex',
      thread: 'task/abc-123',
    });
    const [message] = await inbox(dir, 'codex');
    expect(message).toMatchObject({
      from: 'codex',
      to: ['codex'],
      thread: 'task/abc-123',
      subject: '[symphony] after_run: abc-123',
      kind: 'status',
      priority: 'normal',
      labels: ['orchestrator', 'orchestrator:symphony', 'task-state:completed'],
      context: {
        orchestrator: {
          version: 1,
          name: 'symphony',
          transport: 'hook',
          event: 'after_run',
          workspace: { path: workspace, key: 'abc-123' },
          task: { id: 'abc-123', state: 'completed' },
        },
      },
    });

    const bad = await troupe(workspace, [
      'bus',
      'integration',
      'symphony',
      'emit',
      '--event',
      'after_lunch',
      '--me',
      'codex',
      '--root',
      join(dir, '.agent-mail'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      "invalid --event 'after_lunch' (one of after_create, before_run, after_run, before_remove)",
    );
  });

  it('kanban emit turns a recorded runtime stream into running, handoff and blocking messages', async () => {
    const dir = project();
    await troupe(dir, ['bus', 'init', '--root', '.agent-mail', '--agents', 'codex']);
    const stream = readFileSync(join(repoRoot, 'test', 'fixtures', 'kanban', 'runtime-stream.jsonl'), 'utf8');
    const emitted = await troupe(
      dir,
      ['bus', 'integration', 'kanban', 'emit', '--me', 'codex', '--root', '.agent-mail', '--json'],
      {},
      stream,
    );
    expect(emitted.code).toBe(0);
    // card-9 was already running in the snapshot: only what changes after it is mailed, and the
    // review handoff once, though both the session update and task_ready_for_review announce it
    expect((JSON.parse(emitted.stdout) as Array<{ subject: string }>).map((m) => m.subject)).toEqual([
      '[kanban] running: Add rate limiting to /login',
      '[kanban] review: Fix flaky session test',
      '[kanban] failed: Add rate limiting to /login',
    ]);
    const mail = await inbox(dir, 'codex');
    const review = mail.find((m) => m.subject.startsWith('[kanban] review'))!;
    expect(review).toMatchObject({
      from: 'codex',
      thread: 'task/card-9',
      kind: 'todo',
      labels: ['orchestrator', 'orchestrator:kanban', 'task-state:awaiting_review', 'handoff'],
      context: {
        orchestrator: {
          version: 1,
          name: 'kanban',
          transport: 'bridge',
          event: 'task_sessions_updated',
          workspace: { id: 'ws-app', path: '/home/dev/app/.worktrees/card-9' },
          task: {
            id: 'card-9',
            prompt: 'Fix flaky session test',
            column: 'in_progress',
            state: 'awaiting_review',
            review_reason: 'hook',
            agent_id: 'codex',
          },
        },
      },
    });
    const failed = mail.find((m) => m.subject.startsWith('[kanban] failed'))!;
    expect(failed.labels).toEqual(['orchestrator', 'orchestrator:kanban', 'task-state:failed', 'blocking']);
    const running = mail.find((m) => m.subject.startsWith('[kanban] running'))!;
    expect(running).toMatchObject({ kind: 'status', priority: 'low' });
  });
});
