import { existsSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { bin, project, type TaskJson, troupe, troupeJson, waitFor } from './support/troupe.js';

/**
 * The engine's mail on a bus whose roster (meta/config.json) is someone else's: `bus setup` made
 * it for the live agents claude and codex, and the pipeline's agents are writer and reviewer.
 */
const pipeline = `agents:
  - id: writer
    runtime: claude
    system_prompt: "Write: {{ input }}"
    handoffs: [{ to: reviewer }]
  - id: reviewer
    runtime: mailbox
    handle: codex
    system_prompt: "Review this draft: {{ input }}"
`;
const script = `agents:
  writer: ["Draft: the roster is not ours."]
`;

const configOf = (root: string) => JSON.parse(readFileSync(join(root, 'meta', 'config.json'), 'utf8'));

async function liveProject(): Promise<{ dir: string; base: string }> {
  const dir = project({ 'p.yaml': pipeline, 's.yaml': script });
  const setup = await troupe(dir, ['bus', 'setup', '--agents', 'claude,codex', '--session', 'collab', '-y']);
  expect(setup.code, setup.stderr).toBe(0);
  const base = join(dir, '.agent-mail');
  expect(configOf(base).agents).toEqual(['claude', 'codex']);
  return { dir, base };
}

/** `troupe run` in the background, left waiting on the bus; the caller kills it. */
const startRun = (dir: string, env: Record<string, string> = {}) =>
  execa('node', [bin, 'run', 'a note', '--file', 'p.yaml', '--script', 's.yaml'], {
    cwd: dir,
    reject: false,
    env: { NO_COLOR: '1', ...env },
    stdin: 'ignore',
  });

const inbox = async (dir: string, me: string, root: string) => {
  const listed = await troupe(dir, ['bus', 'list', '--root', root, '--me', me, '--json']);
  return listed.code === 0 ? (JSON.parse(listed.stdout) as Array<{ id: string; thread: string }>) : [];
};

const taskIdOf = async (dir: string) =>
  waitFor(async () => {
    const listed = await troupe(dir, ['list', '--json']);
    const tasks = listed.code === 0 ? (JSON.parse(listed.stdout) as Array<{ id: string }>) : [];
    return tasks[0]?.id;
  }, 30_000);

describe("engine mail on a bus whose roster is someone else's", () => {
  it('a mailbox stage after `bus setup` with other agents is mailed to its handle, and the roster is kept', async () => {
    const { dir, base } = await liveProject();
    const before = readFileSync(join(base, 'meta', 'config.json'));
    const run = startRun(dir);
    try {
      const [asked] = await waitFor(async () => {
        const mail = await inbox(dir, 'codex', base);
        return mail.length > 0 ? mail : undefined;
      }, 30_000);
      const taskId = asked!.thread.replace(/^task\//, '');
      const status = await troupeJson(dir, ['status', taskId]);
      expect(status.json.status).toBe('waiting');
      expect((status.json as TaskJson & { mail_failed: unknown[] }).mail_failed).toEqual([]);
      expect(readFileSync(join(base, 'meta', 'config.json'))).toEqual(before);
    } finally {
      run.kill('SIGKILL');
      await run;
    }
  });

  it('mail that cannot be delivered is a `mail_failed` event, shown by `troupe status` (text and --json)', async () => {
    const { dir, base } = await liveProject();
    // codex's mailbox is a file, not a folder: nothing can be delivered to it
    rmSync(join(base, 'agents', 'codex'), { recursive: true });
    writeFileSync(join(base, 'agents', 'codex'), 'not a mailbox');
    const run = startRun(dir);
    try {
      const taskId = await taskIdOf(dir);
      const failed = await waitFor(async () => {
        const status = await troupeJson<TaskJson & { mail_failed: Array<Record<string, string>> }>(dir, [
          'status',
          taskId,
        ]);
        return status.json.mail_failed.length > 0 ? status.json.mail_failed : undefined;
      }, 30_000);
      expect(failed).toEqual([
        expect.objectContaining({
          to: 'codex',
          kind: 'question',
          subject: `reviewer: stage 2 of ${taskId} is yours`,
          reason: expect.stringMatching(/ENOTDIR|EEXIST|not a directory/),
        }),
      ]);
      const text = await troupe(dir, ['status', taskId]);
      expect(text.stdout).toContain(`mail to codex not delivered (question: reviewer: stage 2 of ${taskId}`);
    } finally {
      run.kill('SIGKILL');
      await run;
    }
  });

  it('replies that cannot be read off the bus are a `mail_failed` too, not a silent wait', async () => {
    const { dir, base } = await liveProject();
    const run = startRun(dir);
    try {
      const [asked] = await waitFor(async () => {
        const mail = await inbox(dir, 'codex', base);
        return mail.length > 0 ? mail : undefined;
      }, 30_000);
      const taskId = asked!.thread.replace(/^task\//, '');
      // the reviewer's inbox, where the reply lands, becomes a symlink: troupe refuses to read it
      const replies = join(base, 'agents', 'reviewer', 'inbox', 'new');
      renameSync(replies, join(dir, 'elsewhere'));
      symlinkSync(join(dir, 'elsewhere'), replies);
      const failed = await waitFor(async () => {
        const status = await troupeJson<TaskJson & { mail_failed: Array<Record<string, string>> }>(dir, [
          'status',
          taskId,
        ]);
        return status.json.mail_failed.length > 0 ? status.json.mail_failed : undefined;
      }, 30_000);
      expect(failed[0]).toMatchObject({
        to: 'reviewer',
        kind: 'reply',
        subject: `replies on task/${taskId}`,
        reason: expect.stringContaining('is a symlink'),
      });
    } finally {
      run.kill('SIGKILL');
      await run;
    }
  });

  it('a second pipeline with other agents in the same project still mails its gate notice', async () => {
    const gated = (id: string) =>
      `agents:\n  - id: ${id}\n    runtime: scripted\n    system_prompt: "{{ input }}"\n    gate: { type: human }\n`;
    const dir = project({
      'one.yaml': gated('a'),
      'two.yaml': gated('b'),
      'sa.yaml': 'agents:\n  a: ["x"]\n',
      'sb.yaml': 'agents:\n  b: ["y"]\n',
    });
    for (const [file, script] of [
      ['one.yaml', 'sa.yaml'],
      ['two.yaml', 'sb.yaml'],
    ]) {
      const run = await troupe(dir, ['run', 'go', '--file', file!, '--script', script!]);
      expect(run.stdout + run.stderr).toMatch(/gate/);
    }
    const root = join(dir, '.agent-mail');
    const notices = await inbox(dir, 'user', root);
    expect(notices.map((m) => (m as { subject?: string }).subject)).toEqual([
      expect.stringMatching(/^approve a's output\?/),
      expect.stringMatching(/^approve b's output\?/),
    ]);
    expect(configOf(root).agents).toEqual(['a', 'user']);
  });

  it('with AM_ROOT set to a live session, the mail goes there and the session gets no roster of its own', async () => {
    const { dir, base } = await liveProject();
    const session = join(base, 'collab');
    const run = startRun(dir, { AM_ROOT: session });
    try {
      await waitFor(async () => {
        const mail = await inbox(dir, 'codex', session);
        return mail.length > 0 ? mail : undefined;
      }, 30_000);
      expect(existsSync(join(session, 'meta', 'config.json'))).toBe(false);
      expect(configOf(base).agents).toEqual(['claude', 'codex']);
      // the live agents are still known in the session: no "unknown handle" warning
      const sent = await troupe(dir, [
        'bus',
        'send',
        '--root',
        session,
        '--me',
        'user',
        '--to',
        'claude',
        '--body',
        'hi',
      ]);
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stderr).not.toContain('unknown handle');
    } finally {
      run.kill('SIGKILL');
      await run;
    }
  });
});
