import { describe, expect, it } from 'vitest';
import { eventLog, project, spawnTroupe, troupe, troupeJson, waitFor } from './support/troupe.js';

const pipeline =
  'agents:\n  - id: writer\n    runtime: claude\n    handoffs: [{to: editor}]\n  - id: editor\n    runtime: claude\n';
// long enough that the checks made while it waits (CLI calls, slow on a loaded machine) fall inside it
const limited =
  'agents:\n  writer: [{error: rate_limit, reset_after_s: 10}, "draft"]\n  editor: ["edited"]\n';

/** Starts a run in the background and returns its task id once it is waiting on the limit. */
async function startWaiting(dir: string) {
  const child = spawnTroupe(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml']);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const id = await waitFor(() =>
    /⏳/.test(stderr) ? /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1] : undefined,
  );
  return { child, id, stderr: () => stderr };
}

describe('rate limits are a scheduling state', () => {
  it('a limited stage waits for the reset (status waiting), then carries on; nothing runs twice', async () => {
    const dir = project({ 'p.yaml': pipeline, 's.yaml': limited });
    const { child, id, stderr } = await startWaiting(dir);
    const during = await troupeJson(dir, ['status', id]);
    expect(during.json.status).toBe('waiting');
    const text = await troupe(dir, ['status', id]);
    expect(text.stdout).toMatch(/provider claude is closed until/);
    await child;
    expect(stderr()).toMatch(/claude is limited; waiting until/);
    const done = await troupeJson(dir, ['status', id]);
    expect(done.json.status).toBe('completed');
    expect(done.json.stages.map((s) => [s.agent, s.output])).toEqual([
      ['writer', 'draft'],
      ['editor', 'edited'],
    ]);
    const log = eventLog(dir, id);
    expect(log.filter((e) => e.type === 'rate_limited').map((e) => e.data.provider)).toEqual(['claude']);
    expect(log.filter((e) => e.type === 'stage_completed')).toHaveLength(2);
  });

  it('another task that needs the closed provider waits too, without calling it', async () => {
    const dir = project({
      'p.yaml': pipeline,
      's.yaml': limited,
      'other.yaml': 'agents:\n  editor: ["edited"]\n',
    });
    const first = await startWaiting(dir);
    const second = await troupeJson(dir, [
      'run',
      'other',
      '--file',
      'p.yaml',
      '--script',
      'other.yaml',
      '--agent',
      'editor',
    ]);
    expect(second.json.error).toBeNull();
    expect(second.json.status).toBe('completed');
    const log = eventLog(dir, second.json.id);
    const waited = log.find((e) => e.type === 'rate_limited');
    expect(waited?.data.message).toMatch(/^claude is closed until/);
    expect(log.findIndex((e) => e.type === 'rate_limited')).toBeLessThan(
      log.findIndex((e) => e.type === 'stage_completed'),
    );
    await first.child;
  });

  it('a limit closes what was limited: an agent on another endpoint of the same runtime does not wait', async () => {
    const dir = project({
      'p.yaml': [
        'agents:',
        '  - id: writer',
        '    runtime: openai',
        '    model: gpt-4.1-mini',
        '    handoffs: [{to: editor}]',
        '  - id: editor',
        '    runtime: openai',
        '    model: llama3.2',
        '    openai: {base_url: "http://127.0.0.1:11434/v1"}',
        '',
      ].join('\n'),
      's.yaml':
        'agents:\n  writer: [{error: rate_limit, reset_after_s: 60}, "draft"]\n  editor: ["edited"]\n',
      'other.yaml': 'agents:\n  editor: ["edited"]\n',
    });
    const first = await startWaiting(dir);
    try {
      const second = await troupeJson(dir, [
        'run',
        'other',
        '--file',
        'p.yaml',
        '--script',
        'other.yaml',
        '--agent',
        'editor',
      ]);
      expect(second.json.status).toBe('completed');
      expect(eventLog(dir, second.json.id).filter((e) => e.type === 'rate_limited')).toEqual([]);
      const limitedBy = eventLog(dir, first.id).find((e) => e.type === 'rate_limited')?.data.provider;
      expect(limitedBy).toBe('openai@api.openai.com');
    } finally {
      first.child.kill('SIGKILL');
      await first.child.catch(() => {});
    }
  });

  it('a process killed while its task waits: resume waits out the rest, then finishes', async () => {
    const dir = project({ 'p.yaml': pipeline, 's.yaml': limited });
    const { child, id } = await startWaiting(dir);
    child.kill('SIGKILL');
    await child;
    const resumed = await troupeJson(dir, ['resume', id]);
    expect(resumed.json.status).toBe('completed');
    expect(eventLog(dir, id).filter((e) => e.type === 'stage_completed')).toHaveLength(2);
  });

  it('with a fallback the stage moves at once to the first open provider, and the decision is logged', async () => {
    const dir = project({
      'p.yaml':
        'agents:\n  - id: writer\n    runtime: claude\n    fallback: [{runtime: gemini, model: gemini-2.5-flash}]\n',
      's.yaml': 'agents:\n  writer: [{error: rate_limit, reset_after_s: 3600}, "draft from the fallback"]\n',
    });
    const { code, json } = await troupeJson(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(code).toBe(0);
    expect(json.stages[0]!.output).toBe('draft from the fallback');
    // the log keeps the provider's own reset (an hour away), and that the stage moved on at once
    const limited = eventLog(dir, json.id).find((e) => e.type === 'rate_limited')!.data;
    expect(Date.parse(String(limited.resetAt)) - Date.parse(String(limited.retryAt))).toBeGreaterThan(
      3500_000,
    );
    const decision = eventLog(dir, json.id).find((e) => e.type === 'decision');
    expect(decision?.data).toMatchObject({
      kind: 'fallback',
      from: { runtime: 'claude', model: null },
      to: { runtime: 'gemini', model: 'gemini-2.5-flash' },
    });
    expect((await troupe(dir, ['status', json.id])).stdout).toMatch(/provider claude is closed until/);
  });
});
